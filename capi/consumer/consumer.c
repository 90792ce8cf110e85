/* consumer.c: a plain C DLPack consumer of libvkflow.so, built against
 * Debian's DLPack 0.6 header (libdlpack-dev), which knows only the legacy
 * DLManagedTensor. It checks every DLTensor field of legacy kDLCPU exports,
 * the lifetime rules (exported memory outlives the tensor and the Manager
 * until the deleter runs), memory accounting and the validation layer; and
 * a small graph on two queues, run from C; and operators (ops.c): a matmul
 * on buffers the program owns, a GLSL kernel registered and called by name;
 * and external memory shared by two Managers (interop_case).
 *
 * Prints "consumer: OK" and exits 0, or prints each failed check and exits 1.
 * Build and run: capi/consumer/build_and_run.sh [directory of libvkflow.so]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "consumer.h"

/* The 0.6 header is the one this consumer is written for. */
#ifndef DLPACK_VERSION
#error "dlpack.h does not define DLPACK_VERSION"
#endif
_Static_assert(DLPACK_VERSION >= 60, "DLPack 0.6 or later expected");
_Static_assert(sizeof(DLTensor) == 48, "DLTensor layout");
_Static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor layout");

int failures;

int ok(int rc, const char *what)
{
	if (rc == VKFLOW_OK)
		return 1;
	char msg[512];
	vkflow_last_error(msg, sizeof msg);
	failures++;
	fprintf(stderr, "consumer: %s failed (%d): %s\n", what, rc, msg);
	return 0;
}

static int64_t allocations(vkflow_manager m)
{
	int64_t a = -1, b = -1;
	if (!ok(vkflow_manager_mem_stats(m, &a, &b), "vkflow_manager_mem_stats"))
		return -1;
	return a;
}

/* Exports t as a legacy DLManagedTensor on kDLCPU. */
static DLManagedTensor *export_cpu(vkflow_tensor t)
{
	void *out = NULL;
	int32_t versioned = -1;
	if (!ok(vkflow_dlpack_export(t, -1, 0, kDLCPU, 0, VKFLOW_COPY_IF_NEEDED, 0, 0, TIMEOUT_NS,
				     &out, &versioned),
		"vkflow_dlpack_export"))
		return NULL;
	CHECK(versioned == 0, "legacy export came back versioned=%d", (int)versioned);
	CHECK(out != NULL, "export returned NULL");
	return out;
}

/* Checks the fields every legacy CPU export of a compact tensor must have. */
static void check_layout(const DLManagedTensor *mt, uint8_t code, uint8_t bits, int ndim,
			 const int64_t *shape)
{
	const DLTensor *t = &mt->dl_tensor;
	CHECK(mt->deleter != NULL, "deleter is NULL");
	CHECK(t->device.device_type == kDLCPU, "device_type %d, want kDLCPU",
	      (int)t->device.device_type);
	CHECK(t->device.device_id == 0, "device_id %d, want 0", t->device.device_id);
	CHECK(t->ndim == ndim, "ndim %d, want %d", t->ndim, ndim);
	CHECK(t->dtype.code == code, "dtype code %u, want %u", t->dtype.code, code);
	CHECK(t->dtype.bits == bits, "dtype bits %u, want %u", t->dtype.bits, bits);
	CHECK(t->dtype.lanes == 1, "dtype lanes %u, want 1", t->dtype.lanes);
	CHECK(t->byte_offset == 0, "byte_offset %llu, want 0", (unsigned long long)t->byte_offset);
	CHECK(t->data != NULL, "data is NULL for a non-empty tensor");
	CHECK(t->shape != NULL, "shape is NULL");
	CHECK(t->strides != NULL, "strides are NULL (allowed by 0.x, but vkflow fills them)");
	if (t->ndim != ndim || t->shape == NULL)
		return;
	int64_t stride = 1;
	for (int i = ndim - 1; i >= 0; i--) {
		CHECK(t->shape[i] == shape[i], "shape[%d] = %lld, want %lld", i,
		      (long long)t->shape[i], (long long)shape[i]);
		if (t->strides != NULL)
			CHECK(t->strides[i] == stride, "strides[%d] = %lld, want %lld (compact row-major)",
			      i, (long long)t->strides[i], (long long)stride);
		stride *= shape[i];
	}
}

static const float *f32_data(const DLManagedTensor *mt)
{
	return (const float *)((const char *)mt->dl_tensor.data + mt->dl_tensor.byte_offset);
}

static const int32_t *i32_data(const DLManagedTensor *mt)
{
	return (const int32_t *)((const char *)mt->dl_tensor.data + mt->dl_tensor.byte_offset);
}

/* A diamond graph on a Manager with two compute queues: b = a + a and
 * c = a * a, then d = b + c, with a uploaded from and d downloaded to host
 * arrays at every run; then the texts and the errors. */
static void graph_case(void)
{
	enum { GN = 1024 };
	vkflow_manager m = 0;
	if (!ok(vkflow_manager_new_queues(-1, VKFLOW_VALIDATION, 2, 0, &m), "vkflow_manager_new_queues"))
		return;
	int32_t nq = 0;
	ok(vkflow_manager_queue_count(m, &nq), "vkflow_manager_queue_count");
	CHECK(nq == 2, "%d logical queues, want 2", (int)nq);

	static float in[GN], out[GN];
	int64_t shape[1] = {GN};
	vkflow_tensor t[4] = {0};
	vkflow_algorithm al[3] = {0};
	vkflow_graph g = 0;
	vkflow_exec e = 0;
	for (int i = 0; i < 4; i++)
		if (!ok(vkflow_tensor_new(m, "float32", 1, shape, NULL, 0, VKFLOW_MEMORY_DEVICE, &t[i]),
			"vkflow_tensor_new"))
			goto done;
	if (!ok(vkflow_kernel_new(m, "add", t[0], t[0], t[1], &al[0]), "vkflow_kernel_new(add)") ||
	    !ok(vkflow_kernel_new(m, "multiply", t[0], t[0], t[2], &al[1]), "vkflow_kernel_new(multiply)") ||
	    !ok(vkflow_kernel_new(m, "add", t[1], t[2], t[3], &al[2]), "vkflow_kernel_new(add)") ||
	    !ok(vkflow_graph_new(m, &g), "vkflow_graph_new"))
		goto done;
	int32_t n_up = -1, n_b = -1, n_c = -1, n_d = -1, n_down = -1;
	ok(vkflow_graph_upload(g, t[0], in, sizeof in, &n_up), "vkflow_graph_upload");
	ok(vkflow_graph_dispatch(g, al[0], NULL, 0, &n_b), "vkflow_graph_dispatch(b)");
	ok(vkflow_graph_dispatch(g, al[1], NULL, 0, &n_c), "vkflow_graph_dispatch(c)");
	ok(vkflow_graph_node_queue(g, n_b, 0), "vkflow_graph_node_queue(b)");
	ok(vkflow_graph_node_queue(g, n_c, 1), "vkflow_graph_node_queue(c)");
	ok(vkflow_graph_node_name(g, n_c, "c=a*a"), "vkflow_graph_node_name");
	ok(vkflow_graph_dispatch(g, al[2], NULL, 0, &n_d), "vkflow_graph_dispatch(d)");
	ok(vkflow_graph_download(g, t[3], out, sizeof out, &n_down), "vkflow_graph_download");
	CHECK(n_up == 0 && n_c == 2 && n_down == 4, "node indices %d %d %d", (int)n_up, (int)n_c, (int)n_down);
	if (failures || !ok(vkflow_graph_compile(g, 0, NULL, 0, 0, &e), "vkflow_graph_compile"))
		goto done;

	for (int run = 0; run < 3; run++) {
		for (int i = 0; i < GN; i++)
			in[i] = (float)(i % 50 + run);
		if (run < 2) {
			if (!ok(vkflow_exec_run(e, 0, 0, 0, 0, TIMEOUT_NS), "vkflow_exec_run"))
				break;
		} else {
			vkflow_run r = 0;
			if (!ok(vkflow_exec_run_async(e, 0, 0, 0, 0, &r), "vkflow_exec_run_async"))
				break;
			ok(vkflow_run_wait(r, TIMEOUT_NS), "vkflow_run_wait");
			int32_t d = 0;
			ok(vkflow_run_done(r, &d), "vkflow_run_done");
			CHECK(d == 1, "run not done after its wait");
			ok(vkflow_run_close(r), "vkflow_run_close");
		}
		int bad = 0;
		for (int i = 0; i < GN && bad < 3; i++) {
			float want = in[i] + in[i] + in[i] * in[i];
			if (out[i] != want) {
				bad++;
				CHECK(out[i] == want, "run %d: d[%d] = %g, want %g", run, i, out[i], want);
			}
		}
	}

	/* The schedule: the needed length first, then the text. */
	size_t len = 0;
	ok(vkflow_exec_schedule(e, NULL, 0, &len), "vkflow_exec_schedule(length)");
	char *text = malloc(len + 1);
	if (text != NULL && ok(vkflow_exec_schedule(e, text, len + 1, NULL), "vkflow_exec_schedule")) {
		CHECK(strlen(text) == len, "schedule length %zu, want %zu", strlen(text), len);
		CHECK(strstr(text, "c=a*a") != NULL, "schedule lacks the node's name: %s", text);
		CHECK(strstr(text, "waits queue") != NULL, "schedule lacks a cross-queue wait: %s", text);
	}
	free(text);
	char dot[64];
	ok(vkflow_exec_dot(e, dot, sizeof dot, &len), "vkflow_exec_dot");
	CHECK(len >= sizeof dot && strncmp(dot, "digraph", 7) == 0 && strlen(dot) == sizeof dot - 1,
	      "DOT text truncated wrongly: %zu, %s", len, dot);

	/* Errors: a cycle through an after edge (b reads a, written by the
	 * upload: the upload after b), an unknown queue, a closed exec. */
	vkflow_graph g2 = 0;
	vkflow_exec e2 = 0;
	if (ok(vkflow_graph_new(m, &g2), "vkflow_graph_new")) {
		int32_t u = -1, b = -1;
		ok(vkflow_graph_upload(g2, t[0], in, sizeof in, &u), "vkflow_graph_upload");
		ok(vkflow_graph_dispatch(g2, al[0], NULL, 0, &b), "vkflow_graph_dispatch");
		ok(vkflow_graph_node_after(g2, u, 1, &b), "vkflow_graph_node_after");
		int rc = vkflow_graph_compile(g2, 0, NULL, 0, 0, &e2);
		char msg[512] = "";
		vkflow_last_error(msg, sizeof msg);
		CHECK(rc == VKFLOW_ERR_INVALID && strstr(msg, "cycle") != NULL, "cycle: rc %d, %s", rc, msg);
		ok(vkflow_graph_close(g2), "vkflow_graph_close");
	}
	if (ok(vkflow_graph_new(m, &g2), "vkflow_graph_new")) {
		int32_t f = -1;
		float one = 1;
		ok(vkflow_graph_fill(g2, t[1], &one, sizeof one, &f), "vkflow_graph_fill");
		int rc = vkflow_graph_node_queue(g2, f, 2);
		CHECK(rc == VKFLOW_ERR_INVALID, "queue 2 of 2: rc %d", rc);
		ok(vkflow_graph_close(g2), "vkflow_graph_close");
	}
	ok(vkflow_exec_close(e), "vkflow_exec_close");
	int rc = vkflow_exec_run(e, 0, 0, 0, 0, TIMEOUT_NS);
	CHECK(rc == VKFLOW_ERR_CLOSED, "run of a closed exec: rc %d", rc);
	ok(vkflow_exec_close(e), "vkflow_exec_close (again)");
done:
	vkflow_graph_close(g);
	for (int i = 0; i < 3; i++)
		vkflow_algorithm_close(al[i]);
	for (int i = 0; i < 4; i++)
		vkflow_tensor_close(t[i]);
	ok(vkflow_manager_close(m), "vkflow_manager_close(graph)");
}

/* External memory: an exportable tensor of one Manager imported by another
 * (the bytes written on one side are read on the other), a UUID mismatch,
 * and a shared timeline, which lavapipe refuses (VKFLOW_ERR_UNSUPPORTED).
 * Every exported fd is handed to an import, which consumes it. */
static void interop_case(void)
{
	enum { IN = 256 };
	_Static_assert(sizeof(vkflow_memory_handle) == 72, "vkflow_memory_handle layout");
	vkflow_manager a = 0, b = 0;
	vkflow_tensor x = 0, y = 0, z = 0;
	vkflow_timeline tl = 0;
	static float data[IN], got[IN];
	for (int i = 0; i < IN; i++)
		data[i] = (float)i * 0.25f;
	int64_t shape[1] = {IN};
	if (!ok(vkflow_manager_new(-1, VKFLOW_VALIDATION, &a), "vkflow_manager_new") ||
	    !ok(vkflow_manager_new(-1, VKFLOW_VALIDATION, &b), "vkflow_manager_new"))
		goto done;
	if (!ok(vkflow_tensor_new(a, "float32", 1, shape, data, sizeof data, VKFLOW_MEMORY_EXPORTABLE, &x),
		"vkflow_tensor_new exportable"))
		goto done;
	vkflow_memory_handle h;
	if (!ok(vkflow_tensor_export_memory(x, &h), "vkflow_tensor_export_memory"))
		goto done;
	CHECK(h.fd >= 0 && h.bytes == sizeof data && h.size >= h.offset + h.bytes && h.dedicated == 1,
	      "handle fd %d bytes %llu size %llu dedicated %d", (int)h.fd, (unsigned long long)h.bytes,
	      (unsigned long long)h.size, (int)h.dedicated);
	if (!ok(vkflow_tensor_import_memory(b, &h, "float32", 1, shape, &y), "vkflow_tensor_import_memory"))
		goto done;
	if (ok(vkflow_tensor_read(y, got, sizeof got), "vkflow_tensor_read"))
		CHECK(memcmp(got, data, sizeof data) == 0, "imported bytes differ from the exported ones");

	if (!ok(vkflow_tensor_export_memory(x, &h), "vkflow_tensor_export_memory"))
		goto done;
	h.device_uuid[0] ^= 0xFF;
	int rc = vkflow_tensor_import_memory(b, &h, "float32", 1, shape, &z);
	CHECK(rc == VKFLOW_ERR_INVALID, "import with another device's UUID returned %d, want %d", rc,
	      VKFLOW_ERR_INVALID);

	rc = vkflow_timeline_new_exportable(a, 0, &tl);
	if (rc == VKFLOW_ERR_UNSUPPORTED) {
		char msg[512];
		vkflow_last_error(msg, sizeof msg);
		CHECK(strstr(msg, "VK_KHR_external_semaphore_fd") != NULL,
		      "unsupported timeline export does not name the extension: %s", msg);
	} else if (ok(rc, "vkflow_timeline_new_exportable")) {
		int32_t fd = -1;
		vkflow_timeline other = 0;
		if (ok(vkflow_timeline_export_fd(tl, &fd), "vkflow_timeline_export_fd") &&
		    ok(vkflow_timeline_import_fd(b, fd, &other), "vkflow_timeline_import_fd"))
			vkflow_timeline_close(other);
	}
done:
	vkflow_timeline_close(tl);
	vkflow_tensor_close(z);
	vkflow_tensor_close(y);
	vkflow_tensor_close(x);
	ok(vkflow_manager_close(b), "vkflow_manager_close");
	ok(vkflow_manager_close(a), "vkflow_manager_close");
}

int main(void)
{
	vkflow_manager m = 0;
	if (!ok(vkflow_manager_new(-1, VKFLOW_VALIDATION, &m), "vkflow_manager_new"))
		return 1;
	int64_t base = allocations(m);

	/* A 3x4 float32 tensor in device memory (mapped or not: a CPU export
	 * copies when it must) and a 1-D int32 tensor in host memory. */
	enum { ROWS = 3, COLS = 4, N = 7 };
	float fdata[ROWS * COLS];
	for (int i = 0; i < ROWS * COLS; i++)
		fdata[i] = 0.5f * (float)i - 2.0f;
	int32_t idata[N];
	for (int i = 0; i < N; i++)
		idata[i] = (i % 2 ? -1 : 1) * (1000 * i + 7);
	int64_t fshape[2] = {ROWS, COLS};
	int64_t ishape[1] = {N};

	vkflow_tensor tf = 0, ti = 0, tl = 0;
	DLManagedTensor *ml = NULL;
	ok(vkflow_tensor_new(m, "float32", 2, fshape, fdata, sizeof fdata, VKFLOW_MEMORY_DEVICE, &tf),
	   "vkflow_tensor_new(float32)");
	ok(vkflow_tensor_new(m, "int32", 1, ishape, idata, sizeof idata, VKFLOW_MEMORY_HOST, &ti),
	   "vkflow_tensor_new(int32)");
	if (failures)
		goto out;
	CHECK(allocations(m) == base + 2, "allocations %lld, want %lld", (long long)allocations(m),
	      (long long)(base + 2));

	/* Case 1: float32, deleter first, then close. */
	DLManagedTensor *mf = export_cpu(tf);
	if (mf != NULL) {
		check_layout(mf, kDLFloat, 32, 2, fshape);
		if (mf->dl_tensor.data != NULL) {
			const float *d = f32_data(mf);
			for (int i = 0; i < ROWS * COLS; i++)
				CHECK(d[i] == fdata[i], "float32[%d] = %g, want %g", i, d[i], fdata[i]);
		}
		if (mf->deleter != NULL)
			mf->deleter(mf);
	}
	ok(vkflow_tensor_close(tf), "vkflow_tensor_close(float32)");
	CHECK(allocations(m) == base + 1, "after closing the float32 tensor: allocations %lld, want %lld",
	      (long long)allocations(m), (long long)(base + 1));

	/* Case 2: int32, close the tensor while the export is alive: the data
	 * stays valid and allocated until the deleter runs. */
	DLManagedTensor *mi = export_cpu(ti);
	if (mi != NULL) {
		check_layout(mi, kDLInt, 32, 1, ishape);
		ok(vkflow_tensor_close(ti), "vkflow_tensor_close(int32)");
		CHECK(allocations(m) == base + 1, "export alive: allocations %lld, want %lld",
		      (long long)allocations(m), (long long)(base + 1));
		if (mi->dl_tensor.data != NULL) {
			const int32_t *d = i32_data(mi);
			for (int i = 0; i < N; i++)
				CHECK(d[i] == idata[i], "int32[%d] = %d, want %d", i, d[i], idata[i]);
		}
		/* Exporting a closed tensor fails cleanly. */
		void *again = NULL;
		int32_t v = 0;
		int rc = vkflow_dlpack_export(ti, -1, 0, kDLCPU, 0, VKFLOW_COPY_IF_NEEDED, 0, 0,
					      TIMEOUT_NS, &again, &v);
		CHECK(rc == VKFLOW_ERR_CLOSED, "export of a closed tensor returned %d, want %d", rc,
		      VKFLOW_ERR_CLOSED);
		if (mi->deleter != NULL)
			mi->deleter(mi);
	} else {
		vkflow_tensor_close(ti);
	}
	CHECK(allocations(m) == base, "after the deleter: allocations %lld, want %lld",
	      (long long)allocations(m), (long long)base);

	/* Case 3: close the Manager while an export is alive; the data stays
	 * readable until the deleter, which then releases the last resources
	 * (a leak would show as a validation message at device destruction). */
	if (ok(vkflow_tensor_new(m, "float32", 2, fshape, fdata, sizeof fdata, VKFLOW_MEMORY_HOST, &tl),
	       "vkflow_tensor_new(float32, host)"))
		ml = export_cpu(tl);

out:
	ok(vkflow_manager_close(m), "vkflow_manager_close");
	if (ml != NULL) {
		check_layout(ml, kDLFloat, 32, 2, fshape);
		if (ml->dl_tensor.data != NULL) {
			const float *d = f32_data(ml);
			for (int i = 0; i < ROWS * COLS; i++)
				CHECK(d[i] == fdata[i], "after Manager close: float32[%d] = %g, want %g", i,
				      d[i], fdata[i]);
		}
		if (ml->deleter != NULL)
			ml->deleter(ml);
	}
	int64_t a = 0, b = 0;
	int rc = vkflow_manager_mem_stats(m, &a, &b);
	CHECK(rc == VKFLOW_ERR_CLOSED, "mem_stats of a closed Manager returned %d, want %d", rc,
	      VKFLOW_ERR_CLOSED);

	graph_case();
	ops_case();
	eager_case();
	interop_case();
	wire_case();

	char text[1024] = "";
	int64_t msgs = vkflow_validation_messages(text, sizeof text);
	CHECK(msgs == 0, "%lld validation messages, the last: %s", (long long)msgs, text);

	if (failures) {
		fprintf(stderr, "consumer: FAILED (%d checks)\n", failures);
		return 1;
	}
	printf("consumer: OK\n");
	return 0;
}

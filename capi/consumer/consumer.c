/* consumer.c: a plain C DLPack consumer of libvkflow.so, built against
 * Debian's DLPack 0.6 header (libdlpack-dev), which knows only the legacy
 * DLManagedTensor. It checks every DLTensor field of legacy kDLCPU exports,
 * the lifetime rules (exported memory outlives the tensor and the Manager
 * until the deleter runs), memory accounting and the validation layer.
 *
 * Prints "consumer: OK" and exits 0, or prints each failed check and exits 1.
 * Build and run: capi/consumer/build_and_run.sh [directory of libvkflow.so]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "vkflow.h"

/* The 0.6 header is the one this consumer is written for. */
#ifndef DLPACK_VERSION
#error "dlpack.h does not define DLPACK_VERSION"
#endif
_Static_assert(DLPACK_VERSION >= 60, "DLPack 0.6 or later expected");
_Static_assert(sizeof(DLTensor) == 48, "DLTensor layout");
_Static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor layout");

#define TIMEOUT_NS (10LL * 1000 * 1000 * 1000)

static int failures;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			failures++;                                             \
			fprintf(stderr, "consumer: %s:%d: check failed: %s: ",  \
				__FILE__, __LINE__, #cond);                     \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
		}                                                               \
	} while (0)

/* Checks a vkflow call; on failure prints the library's message. Returns
 * 1 on success. */
static int ok(int rc, const char *what)
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

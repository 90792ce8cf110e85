/* ops.c: operators from C. A matmul on buffers this program owns (page
 * aligned with aligned_alloc, wrapped as DLPack tensors and imported without
 * a copy), checked against a C loop; a GLSL kernel registered and called by
 * name with push constants; a GLSL compile error reported with its line;
 * the names list and bad calls. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "consumer.h"

enum { PAGE = 4096 };

/* A DLManagedTensor over memory the program owns; the deleter frees only
 * the wrapper and counts the call (it may run on a library thread). */
struct owned {
	DLManagedTensor mt;
	int64_t shape[2];
};

static atomic_int deleters;

static void owned_deleter(DLManagedTensor *self)
{
	free(self->manager_ctx);
	atomic_fetch_add(&deleters, 1);
}

/* A rows x cols float32 buffer, page aligned, its size rounded up to pages. */
static float *owned_buffer(int64_t rows, int64_t cols)
{
	size_t bytes = (size_t)(rows * cols) * sizeof(float);
	bytes = (bytes + PAGE - 1) / PAGE * PAGE;
	float *p = aligned_alloc(PAGE, bytes);
	if (p != NULL)
		memset(p, 0, bytes);
	return p;
}

/* Imports data (rows x cols float32, compact) with VKFLOW_COPY_NEVER: the
 * tensor is the program's memory. Returns 0 on failure. */
static vkflow_tensor import_owned(vkflow_manager m, float *data, int64_t rows, int64_t cols)
{
	struct owned *o = calloc(1, sizeof *o);
	if (o == NULL) {
		CHECK(o != NULL, "calloc failed");
		return 0;
	}
	o->shape[0] = rows;
	o->shape[1] = cols;
	o->mt.dl_tensor.data = data;
	o->mt.dl_tensor.device.device_type = kDLCPU;
	o->mt.dl_tensor.ndim = 2;
	o->mt.dl_tensor.dtype.code = kDLFloat;
	o->mt.dl_tensor.dtype.bits = 32;
	o->mt.dl_tensor.dtype.lanes = 1;
	o->mt.dl_tensor.shape = o->shape;
	o->mt.manager_ctx = o;
	o->mt.deleter = owned_deleter;
	vkflow_tensor t = 0;
	int32_t copied = -1;
	/* The library owns the wrapper from here, even on failure. */
	if (!ok(vkflow_dlpack_import_copy(m, &o->mt, 0, VKFLOW_COPY_NEVER, TIMEOUT_NS, &t, &copied),
		"vkflow_dlpack_import_copy(COPY_NEVER)"))
		return 0;
	CHECK(copied == 0, "import of an aligned compact buffer copied");
	return t;
}

static int has_op(const char *names, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = names; (p = strstr(p, name)) != NULL; p += n)
		if ((p == names || p[-1] == '\n') && (p[n] == '\n' || p[n] == 0))
			return 1;
	return 0;
}

/* The names of every op (malloc'd, newline-separated). */
static char *op_names(void)
{
	size_t len = vkflow_op_names(NULL, 0);
	char *buf = malloc(len + 1);
	if (buf == NULL)
		return NULL;
	size_t again = vkflow_op_names(buf, len + 1);
	CHECK(again == len && strlen(buf) == len, "vkflow_op_names: %zu then %zu, strlen %zu", len,
	      again, strlen(buf));
	return buf;
}

/* C = A B on the program's buffers, against a C loop. The values are small
 * integers, so every partial sum is exact in float32 whatever the order. */
enum { M = 33, K = 47, N = 29 };

static void matmul_case(vkflow_manager m, float *a, float *b, float *c)
{
	static float want[M * N], got[M * N];
	for (int i = 0; i < M * K; i++)
		a[i] = (float)((i * 7) % 9 - 4);
	for (int i = 0; i < K * N; i++)
		b[i] = (float)((i * 5) % 7 - 3);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float s = 0;
			for (int k = 0; k < K; k++)
				s += a[i * K + k] * b[k * N + j];
			want[i * N + j] = s;
		}
	c[0] = 12345.0f; /* overwritten by the matmul */

	vkflow_tensor ta = import_owned(m, a, M, K), tb = import_owned(m, b, K, N);
	vkflow_tensor tc = import_owned(m, c, M, N);
	if (ta && tb && tc) {
		vkflow_tensor in[2] = {ta, tb}, out[1] = {tc};
		if (ok(vkflow_op_call(m, "matmul", in, 2, out, 1, NULL), "vkflow_op_call(matmul)")) {
			CHECK(out[0] == tc, "a given output slot was replaced");
			int bad = 0;
			for (int i = 0; i < M * N && bad < 5; i++)
				if (c[i] != want[i]) {
					CHECK(c[i] == want[i], "matmul c[%d] = %g, want %g", i, c[i], want[i]);
					bad++;
				}
			if (bad == 0)
				printf("consumer: matmul %dx%d @ %dx%d into the program's own buffer: exact\n",
				       M, K, K, N);
		}
		/* An output slot of 0: the library allocates, the caller owns it. */
		vkflow_tensor fresh[1] = {0};
		if (ok(vkflow_op_call(m, "matmul", in, 2, fresh, 1, ""), "vkflow_op_call(matmul, new out)")) {
			CHECK(fresh[0] != 0, "no output tensor returned");
			if (ok(vkflow_tensor_read(fresh[0], got, sizeof got), "vkflow_tensor_read"))
				CHECK(memcmp(got, want, sizeof got) == 0, "matmul into a new tensor differs");
			ok(vkflow_tensor_close(fresh[0]), "vkflow_tensor_close");
		}
	}
	vkflow_tensor_close(ta);
	vkflow_tensor_close(tb);
	vkflow_tensor_close(tc);
}

static const char scale_add_glsl[] =
	"#version 450\n"
	"layout(local_size_x = 64) in;\n"
	"layout(set = 0, binding = 0) readonly buffer A { float a[]; };\n"
	"layout(set = 0, binding = 1) readonly buffer B { float b[]; };\n"
	"layout(set = 0, binding = 2) writeonly buffer C { float c[]; };\n"
	"layout(push_constant) uniform P { float s; } p;\n"
	"void main() {\n"
	"    uint i = gl_GlobalInvocationID.x;\n"
	"    if (i < uint(c.length())) c[i] = p.s * a[i] + b[i];\n"
	"}\n";

/* The error is on line 5. */
static const char broken_glsl[] =
	"#version 450\n"
	"layout(local_size_x = 1) in;\n"
	"layout(set = 0, binding = 0) buffer A { float a[]; };\n"
	"void main() {\n"
	"    a[0] = undeclared_name;\n"
	"}\n";

static void registry_case(vkflow_manager m)
{
	char msg[1024];
	if (!ok(vkflow_op_register_glsl("consumer.scale_add", (char *)scale_add_glsl, 2),
		"vkflow_op_register_glsl"))
		return;
	int rc = vkflow_op_register_glsl("consumer.scale_add", (char *)scale_add_glsl, 2);
	CHECK(rc == VKFLOW_ERR_INVALID, "registering a taken name: rc %d", rc);

	char *names = op_names();
	if (names != NULL)
		CHECK(has_op(names, "consumer.scale_add"), "names lack consumer.scale_add: %s", names);
	free(names);

	enum { N = 1000 };
	static float av[N], bv[N], cv[N];
	for (int i = 0; i < N; i++) {
		av[i] = (float)i;
		bv[i] = (float)(N - i) * 0.5f;
	}
	int64_t shape[1] = {N};
	vkflow_tensor a = 0, b = 0, c = 0;
	ok(vkflow_tensor_new(m, "float32", 1, shape, av, sizeof av, VKFLOW_MEMORY_DEVICE, &a), "tensor a");
	ok(vkflow_tensor_new(m, "float32", 1, shape, bv, sizeof bv, VKFLOW_MEMORY_DEVICE, &b), "tensor b");
	ok(vkflow_tensor_new(m, "float32", 1, shape, NULL, 0, VKFLOW_MEMORY_DEVICE, &c), "tensor c");
	if (a && b && c) {
		/* push: the float 2.0, little-endian bytes 00 00 00 40, in base64. */
		float two = 2.0f;
		unsigned char bytes[4];
		memcpy(bytes, &two, 4);
		CHECK(bytes[0] == 0 && bytes[1] == 0 && bytes[2] == 0 && bytes[3] == 0x40,
		      "not a little-endian IEEE float");
		vkflow_tensor in[2] = {a, b}, out[1] = {c};
		if (ok(vkflow_op_call(m, "consumer.scale_add", in, 2, out, 1, "{\"push\": \"AAAAQA==\"}"),
		       "vkflow_op_call(consumer.scale_add)") &&
		    ok(vkflow_tensor_read(c, cv, sizeof cv), "vkflow_tensor_read")) {
			for (int i = 0; i < N; i++)
				if (cv[i] != 2.0f * av[i] + bv[i]) {
					CHECK(cv[i] == 2.0f * av[i] + bv[i], "scale_add c[%d] = %g", i, cv[i]);
					break;
				}
		}
		/* A registered kernel cannot infer its outputs: a 0 slot fails. */
		vkflow_tensor none[1] = {0};
		rc = vkflow_op_call(m, "consumer.scale_add", in, 2, none, 1, NULL);
		CHECK(rc == VKFLOW_ERR_INVALID && none[0] == 0, "0 output slot of a registered kernel: rc %d", rc);
		rc = vkflow_op_call(m, "consumer.scale_add", in, 2, out, 1, "{\"unknown\": 1}");
		CHECK(rc == VKFLOW_ERR_INVALID, "unknown attribute: rc %d", rc);
	}
	vkflow_tensor_close(a);
	vkflow_tensor_close(b);
	vkflow_tensor_close(c);
	ok(vkflow_op_unregister("consumer.scale_add"), "vkflow_op_unregister");
	rc = vkflow_op_call(m, "consumer.scale_add", NULL, 0, NULL, 0, NULL);
	CHECK(rc == VKFLOW_ERR_INVALID, "call after unregister: rc %d", rc);
	vkflow_last_error(msg, sizeof msg);
	CHECK(strstr(msg, "consumer.scale_add") != NULL, "unknown op message: %s", msg);

	/* A compile error names the line. */
	rc = vkflow_op_register_glsl("consumer.broken", (char *)broken_glsl, 1);
	vkflow_last_error(msg, sizeof msg);
	CHECK(rc == VKFLOW_ERR_INVALID, "broken GLSL: rc %d", rc);
	CHECK(strstr(msg, "undeclared_name") != NULL && strstr(msg, ":5:") != NULL,
	      "compile error without the name and line 5: %s", msg);
}

/* Gradients by name: the VJP of matmul against the closed form, a
 * gradient entry, and the refusal of an op without a derivative. */
static void vjp_case(vkflow_manager m)
{
	float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, -1, 2, 0, 0.5f, 3}; /* [2,3] @ [3,2] */
	float g[4] = {1, 0.5f, -1, 2};
	int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sg[2] = {2, 2};
	vkflow_tensor ta = 0, tb = 0, tg = 0;
	if (!ok(vkflow_tensor_new(m, "float32", 2, sa, a, sizeof a, 0, &ta), "vkflow_tensor_new") ||
	    !ok(vkflow_tensor_new(m, "float32", 2, sb, b, sizeof b, 0, &tb), "vkflow_tensor_new") ||
	    !ok(vkflow_tensor_new(m, "float32", 2, sg, g, sizeof g, 0, &tg), "vkflow_tensor_new"))
		goto done;
	vkflow_tensor in[2] = {ta, tb}, cot[1] = {tg}, grads[2] = {0, 0};
	int32_t wants[2] = {1, 1};
	if (ok(vkflow_op_vjp(m, "matmul", in, 2, NULL, 0, cot, 1, NULL, wants, grads), "vkflow_op_vjp(matmul)")) {
		/* ga = g @ b^T, gb = a^T @ g */
		float ga[6], gb[6], wa[6], wb[6];
		for (int i = 0; i < 2; i++)
			for (int k = 0; k < 3; k++)
				wa[i * 3 + k] = g[i * 2] * b[k * 2] + g[i * 2 + 1] * b[k * 2 + 1];
		for (int k = 0; k < 3; k++)
			for (int j = 0; j < 2; j++)
				wb[k * 2 + j] = a[k] * g[j] + a[3 + k] * g[2 + j];
		CHECK(grads[0] != 0 && grads[1] != 0, "vkflow_op_vjp gave no gradients");
		if (grads[0] && ok(vkflow_tensor_read(grads[0], ga, sizeof ga), "vkflow_tensor_read"))
			CHECK(memcmp(ga, wa, sizeof ga) == 0, "matmul VJP: grad a differs (ga[0] %g, want %g)", ga[0], wa[0]);
		if (grads[1] && ok(vkflow_tensor_read(grads[1], gb, sizeof gb), "vkflow_tensor_read"))
			CHECK(memcmp(gb, wb, sizeof gb) == 0, "matmul VJP: grad b differs (gb[0] %g, want %g)", gb[0], wb[0]);
		vkflow_tensor_close(grads[0]);
		vkflow_tensor_close(grads[1]);
		printf("consumer: vkflow_op_vjp(matmul): exact\n");
	}
	/* Only b's gradient. */
	wants[0] = 0;
	grads[0] = grads[1] = 0;
	if (ok(vkflow_op_vjp(m, "matmul", in, 2, NULL, 0, cot, 1, "", wants, grads), "vkflow_op_vjp(wants)")) {
		CHECK(grads[0] == 0 && grads[1] != 0, "wants {0, 1} gave slots %llu %llu",
		      (unsigned long long)grads[0], (unsigned long long)grads[1]);
		vkflow_tensor_close(grads[1]);
	}
	int32_t kind = -1;
	char why[128];
	if (ok(vkflow_op_gradient("less", &kind, why, sizeof why, NULL), "vkflow_op_gradient"))
		CHECK(kind == 0 && strstr(why, "comparison") != NULL, "less: kind %d, reason %s", (int)kind, why);
	if (ok(vkflow_op_gradient("floor", &kind, NULL, 0, NULL), "vkflow_op_gradient"))
		CHECK(kind == 3, "floor: kind %d, want 3", (int)kind);
	int rc = vkflow_op_vjp(m, "less", in, 2, NULL, 0, cot, 1, NULL, NULL, grads);
	char msg[256];
	vkflow_last_error(msg, sizeof msg);
	CHECK(rc == VKFLOW_ERR_INVALID && strstr(msg, "not differentiable") != NULL, "vjp of less: rc %d, %s", rc, msg);
done:
	vkflow_tensor_close(ta);
	vkflow_tensor_close(tb);
	vkflow_tensor_close(tg);
}

/* A tape: y = sum(a @ b) recorded into a graph, its backward graph built
 * and both run; dy/db = a^T @ ones. */
static void tape_case(vkflow_manager m)
{
	float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, -1, 2, 0, 0.5f, 3}, one = 1;
	int64_t sa[2] = {2, 3}, sb[2] = {3, 2};
	vkflow_tensor ta = 0, tb = 0, tone = 0;
	vkflow_graph g = 0, bg = 0;
	vkflow_tape tp = 0;
	vkflow_exec fe = 0, be = 0;
	vkflow_tensor in[2] = {0, 0}, ab[1] = {0}, y[1] = {0}, wrt[1] = {0}, grads[1] = {0};
	if (!ok(vkflow_tensor_new(m, "float32", 2, sa, a, sizeof a, 0, &ta), "vkflow_tensor_new") ||
	    !ok(vkflow_tensor_new(m, "float32", 2, sb, b, sizeof b, 0, &tb), "vkflow_tensor_new") ||
	    !ok(vkflow_tensor_new(m, "float32", 0, NULL, &one, sizeof one, 0, &tone), "vkflow_tensor_new") ||
	    !ok(vkflow_graph_new(m, &g), "vkflow_graph_new") || !ok(vkflow_tape_new(m, g, &tp), "vkflow_tape_new"))
		goto done;
	in[0] = ta;
	in[1] = tb;
	wrt[0] = tb;
	uint64_t saved = 0;
	if (!ok(vkflow_tape_call(tp, "matmul", in, 2, NULL, ab, 1), "vkflow_tape_call(matmul)") ||
	    !ok(vkflow_tape_call(tp, "sum", ab, 1, NULL, y, 1), "vkflow_tape_call(sum)") ||
	    !ok(vkflow_graph_input(g, 2, in), "vkflow_graph_input") ||
	    !ok(vkflow_tape_grad(tp, y, 1, &tone, wrt, 1, &bg, grads, &saved), "vkflow_tape_grad") ||
	    !ok(vkflow_graph_compile(g, 0, NULL, 0, 0, &fe), "vkflow_graph_compile") ||
	    !ok(vkflow_graph_compile(bg, 0, NULL, 0, 0, &be), "vkflow_graph_compile(backward)") ||
	    !ok(vkflow_exec_run(fe, 0, 0, 0, 0, -1), "vkflow_exec_run") ||
	    !ok(vkflow_exec_run(be, 0, 0, 0, 0, -1), "vkflow_exec_run(backward)"))
		goto done;
	float gb[6], want[6];
	for (int k = 0; k < 3; k++)
		want[k * 2] = want[k * 2 + 1] = a[k] + a[3 + k];
	if (ok(vkflow_tensor_read(grads[0], gb, sizeof gb), "vkflow_tensor_read")) {
		CHECK(memcmp(gb, want, sizeof gb) == 0, "tape gradient: gb[0] %g, want %g", gb[0], want[0]);
		CHECK(saved == sizeof a, "saved bytes %llu, want %zu (a only)", (unsigned long long)saved, sizeof a);
		printf("consumer: vkflow_tape_grad: exact, %llu saved bytes\n", (unsigned long long)saved);
	}
done:
	vkflow_exec_close(fe);
	vkflow_exec_close(be);
	vkflow_graph_close(bg);
	vkflow_tape_close(tp);
	vkflow_tensor_close(ab[0]);
	vkflow_tensor_close(y[0]);
	vkflow_tensor_close(grads[0]);
	vkflow_graph_close(g);
	vkflow_tensor_close(ta);
	vkflow_tensor_close(tb);
	vkflow_tensor_close(tone);
}

/* The soft rasterizer from C: two triangles into 4x4 on one queue (batch 1:
 * two layers blended), the image against the formula computed here, the
 * backward graph run twice with bit-identical gradients, and bad options
 * refused. */
static double soft_dist(const float *t, double px, double py)
{
	double best = 1e300, w[3];
	for (int k = 0; k < 3; k++) {
		double ax = t[2 * k], ay = t[2 * k + 1], bx = t[2 * ((k + 1) % 3)], by = t[2 * ((k + 1) % 3) + 1];
		double ex = bx - ax, ey = by - ay, l2 = ex * ex + ey * ey, s = 0;
		if (l2 > 0) {
			s = ((px - ax) * ex + (py - ay) * ey) / l2;
			s = s < 0 ? 0 : s > 1 ? 1 : s;
		}
		double qx = px - ax - s * ex, qy = py - ay - s * ey, d = sqrt(qx * qx + qy * qy);
		best = d < best ? d : best;
		w[k] = ex * (py - ay) - ey * (px - ax);
	}
	int inside = (w[0] >= 0 && w[1] >= 0 && w[2] >= 0) || (w[0] <= 0 && w[1] <= 0 && w[2] <= 0);
	return inside ? best : -best;
}

static void render_case(vkflow_manager m)
{
	float tv[12] = {0.5f, 0.25f, 3.5f, 1, 1, 3.75f, 2, 0, 4, 4, 0, 2.5f};
	float cv[8] = {1, 0.5f, 0, 0.75f, 0, 0.25f, 1, 0.5f};
	int64_t ts[3] = {2, 3, 2}, cs[2] = {2, 4}, is[3] = {4, 4, 4};
	float ones[64];
	for (int i = 0; i < 64; i++)
		ones[i] = 1;
	vkflow_tensor tri = 0, rgba = 0, dy = 0, img = 0, grads[2] = {0, 0};
	vkflow_graph g = 0, bg = 0;
	vkflow_tape tp = 0;
	vkflow_exec fe = 0, be = 0;
	if (!ok(vkflow_tensor_new(m, "float32", 3, ts, tv, sizeof tv, 0, &tri), "vkflow_tensor_new") ||
	    !ok(vkflow_tensor_new(m, "float32", 2, cs, cv, sizeof cv, 0, &rgba), "vkflow_tensor_new") ||
	    !ok(vkflow_tensor_new(m, "float32", 3, is, ones, sizeof ones, 0, &dy), "vkflow_tensor_new") ||
	    !ok(vkflow_graph_new(m, &g), "vkflow_graph_new") || !ok(vkflow_tape_new(m, g, &tp), "vkflow_tape_new"))
		goto done;
	char msg[256];
	int rc = vkflow_soft_render(tp, tri, rgba, "{\"height\": 4, \"width\": 4, \"sigma\": -1}", &img);
	vkflow_last_error(msg, sizeof msg);
	CHECK(rc == VKFLOW_ERR_INVALID && strstr(msg, "sigma") != NULL, "soft_render sigma -1: rc %d, %s", rc, msg);
	rc = vkflow_soft_render(tp, tri, rgba, "{\"height\": 4, \"width\": 4, \"sigma\": 0}", &img);
	vkflow_last_error(msg, sizeof msg);
	CHECK(rc == VKFLOW_ERR_INVALID && strstr(msg, "sigma is 0") != NULL, "soft_render sigma 0: rc %d, %s", rc, msg);
	rc = vkflow_soft_render(tp, tri, rgba, "{\"height\": 4, \"width\": 4, \"colour\": 1}", &img);
	CHECK(rc == VKFLOW_ERR_INVALID, "soft_render unknown option: rc %d", rc);
	vkflow_tensor in[2] = {tri, rgba};
	uint64_t saved = 0;
	if (!ok(vkflow_soft_render(tp, tri, rgba, "{\"height\": 4, \"width\": 4, \"sigma\": 0.5, \"batch\": 1}", &img),
		"vkflow_soft_render") ||
	    !ok(vkflow_graph_input(g, 2, in), "vkflow_graph_input") ||
	    !ok(vkflow_tape_grad(tp, &img, 1, &dy, in, 2, &bg, grads, &saved), "vkflow_tape_grad") ||
	    !ok(vkflow_graph_compile(g, 0, NULL, 0, 0, &fe), "vkflow_graph_compile") ||
	    !ok(vkflow_graph_compile(bg, 0, NULL, 0, 0, &be), "vkflow_graph_compile(backward)") ||
	    !ok(vkflow_exec_run(fe, 0, 0, 0, 0, -1), "vkflow_exec_run") ||
	    !ok(vkflow_exec_run(be, 0, 0, 0, 0, -1), "vkflow_exec_run(backward)"))
		goto done;
	float got[64], g1[12], g2[12];
	double worst = 0;
	if (!ok(vkflow_tensor_read(img, got, sizeof got), "vkflow_tensor_read") ||
	    !ok(vkflow_tensor_read(grads[0], g1, sizeof g1), "vkflow_tensor_read"))
		goto done;
	for (int i = 0; i < 16; i++) {
		double o[4] = {0, 0, 0, 0};
		for (int t = 0; t < 2; t++) {
			double a = cv[t * 4 + 3] / (1 + exp(-soft_dist(tv + 6 * t, i % 4 + 0.5, i / 4 + 0.5) / 0.5));
			for (int c = 0; c < 3; c++)
				o[c] = cv[t * 4 + c] * a + o[c] * (1 - a);
			o[3] = a + o[3] * (1 - a);
		}
		for (int c = 0; c < 4; c++)
			worst = fmax(worst, fabs(o[c] - got[i * 4 + c]));
	}
	CHECK(worst < 2e-5, "soft_render image off by %g", worst);
	if (ok(vkflow_exec_run(be, 0, 0, 0, 0, -1), "vkflow_exec_run(backward again)") &&
	    ok(vkflow_tensor_read(grads[0], g2, sizeof g2), "vkflow_tensor_read"))
		CHECK(memcmp(g1, g2, sizeof g1) == 0, "soft_render gradients differ between two backward runs");
	printf("consumer: vkflow_soft_render: image within %.1e, gradients bit-identical, %llu saved bytes\n", worst,
	       (unsigned long long)saved);
done:
	vkflow_exec_close(fe);
	vkflow_exec_close(be);
	vkflow_graph_close(bg);
	vkflow_tensor_close(img);
	vkflow_tensor_close(grads[0]);
	vkflow_tensor_close(grads[1]);
	vkflow_tape_close(tp);
	vkflow_graph_close(g);
	vkflow_tensor_close(tri);
	vkflow_tensor_close(rgba);
	vkflow_tensor_close(dy);
}

void ops_case(void)
{
	vkflow_manager m = 0;
	if (!ok(vkflow_manager_new(-1, VKFLOW_VALIDATION, &m), "vkflow_manager_new"))
		return;
	char *names = op_names();
	int with_matmul = names != NULL && has_op(names, "matmul");
	free(names);

	registry_case(m);
	vjp_case(m);
	tape_case(m);
	render_case(m);
	/* The buffers outlive the Manager: its close waits for the GPU and
	 * runs the import deleters; they are freed after that. */
	float *a = owned_buffer(M, K), *b = owned_buffer(K, N), *c = owned_buffer(M, N);
	int want_deleters = 0;
	if (a == NULL || b == NULL || c == NULL)
		CHECK(0, "aligned_alloc failed");
	else if (with_matmul) {
		matmul_case(m, a, b, c);
		want_deleters = 3;
	} else
		printf("consumer: SKIP matmul: no op named \"matmul\" in vkflow_op_names\n");
	ok(vkflow_manager_close(m), "vkflow_manager_close");
	CHECK(atomic_load(&deleters) == want_deleters, "%d import deleters ran, want %d",
	      atomic_load(&deleters), want_deleters);
	free(a);
	free(b);
	free(c);
}

/* eager.c: eager op calls from C. A chain of 500 dependent
 * vkflow_op_call_async adds (each input closed right after the call that
 * reads it), one read at the end; an input overwritten with
 * vkflow_tensor_write while queued calls read it; vkflow_op_call_timeout,
 * vkflow_tensor_wait, vkflow_synchronize; the cache counters (every call
 * after the first hits, no host wait) and the wait counters; bad calls. */
#include <stdint.h>
#include <string.h>

#include "consumer.h"

enum { N = 256, CHAIN = 500 };

static vkflow_tensor filled(vkflow_manager m, float v)
{
	float data[N];
	for (int i = 0; i < N; i++)
		data[i] = v;
	int64_t shape[1] = {N};
	vkflow_tensor t = 0;
	ok(vkflow_tensor_new(m, "float32", 1, shape, data, sizeof data, VKFLOW_MEMORY_DEVICE, &t),
	   "vkflow_tensor_new");
	return t;
}

static void chain_case(vkflow_manager m)
{
	vkflow_tensor x = filled(m, 0), one = filled(m, 1);
	vkflow_op_stats s0, s1;
	ok(vkflow_op_cache_stats(m, &s0), "vkflow_op_cache_stats");
	for (int i = 0; i < CHAIN; i++) {
		vkflow_tensor in[2] = {x, one}, out[1] = {0};
		if (!ok(vkflow_op_call_async(m, "add", in, 2, out, 1, NULL), "vkflow_op_call_async(add)"))
			return;
		ok(vkflow_tensor_close(x), "vkflow_tensor_close"); /* the queued add still reads it */
		x = out[0];
	}
	float got[N];
	if (ok(vkflow_tensor_read(x, got, sizeof got), "vkflow_tensor_read")) /* waits */
		for (int i = 0; i < N; i++)
			CHECK(got[i] == (float)CHAIN, "chain x[%d] = %g, want %d", i, got[i], CHAIN);
	ok(vkflow_op_cache_stats(m, &s1), "vkflow_op_cache_stats");
	CHECK(s1.submits - s0.submits == CHAIN, "%llu submits for %d calls",
	      (unsigned long long)(s1.submits - s0.submits), CHAIN);
	CHECK(s1.hits - s0.hits >= CHAIN - 1, "%llu cache hits in %d calls",
	      (unsigned long long)(s1.hits - s0.hits), CHAIN);
	CHECK(s1.host_waits == s0.host_waits, "%llu host waits inside the calls",
	      (unsigned long long)(s1.host_waits - s0.host_waits));
	ok(vkflow_tensor_close(x), "vkflow_tensor_close");
	ok(vkflow_tensor_close(one), "vkflow_tensor_close");
}

static void overwrite_case(vkflow_manager m)
{
	vkflow_tensor a = filled(m, 1), outs[8];
	for (int i = 0; i < 8; i++) {
		vkflow_tensor in[2] = {a, a};
		outs[i] = 0;
		ok(vkflow_op_call_async(m, "mul", in, 2, &outs[i], 1, NULL), "vkflow_op_call_async(mul)");
		float next[N];
		for (int k = 0; k < N; k++)
			next[k] = (float)(i + 2);
		/* Waits for the queued mul that reads a, then writes. */
		ok(vkflow_tensor_write(a, next, sizeof next), "vkflow_tensor_write");
	}
	for (int i = 0; i < 8; i++) {
		CHECK(vkflow_tensor_wait(outs[i], TIMEOUT_NS) == VKFLOW_OK, "vkflow_tensor_wait");
		float got[N];
		if (ok(vkflow_tensor_read(outs[i], got, sizeof got), "vkflow_tensor_read"))
			CHECK(got[N - 1] == (float)((i + 1) * (i + 1)), "mul %d read %g", i, got[N - 1]);
		vkflow_tensor_close(outs[i]);
	}
	vkflow_tensor_close(a);
}

static void sync_and_errors_case(vkflow_manager m)
{
	vkflow_tensor a = filled(m, 3), out[1] = {0};
	vkflow_tensor in[2] = {a, a};
	if (ok(vkflow_op_call_timeout(m, "mul", in, 2, out, 1, NULL, TIMEOUT_NS), "vkflow_op_call_timeout")) {
		float got[N];
		if (ok(vkflow_tensor_read(out[0], got, sizeof got), "vkflow_tensor_read"))
			CHECK(got[0] == 9.0f, "mul read %g", got[0]);
		vkflow_tensor_close(out[0]);
	}
	ok(vkflow_synchronize(m, TIMEOUT_NS), "vkflow_synchronize");

	/* A timeout that ends before the op: VKFLOW_ERR_TIMEOUT, the slot left
	 * alone, and the op still completes (synchronize). Work queued ahead
	 * keeps the queue busy past the call. */
	int64_t big[1] = {1 << 20};
	vkflow_tensor busy = 0;
	ok(vkflow_tensor_new(m, "float32", 1, big, NULL, 0, VKFLOW_MEMORY_DEVICE, &busy), "vkflow_tensor_new");
	for (int i = 0; i < 20; i++) {
		vkflow_tensor bin[2] = {busy, busy}, bout[1] = {busy};
		ok(vkflow_op_call_async(m, "add", bin, 2, bout, 1, NULL), "vkflow_op_call_async(add busy)");
	}
	vkflow_tensor late[1] = {0};
	int trc = vkflow_op_call_timeout(m, "mul", in, 2, late, 1, NULL, 0);
	CHECK(trc == VKFLOW_ERR_TIMEOUT && late[0] == 0, "vkflow_op_call_timeout(0) behind busy work: rc %d, slot %llu",
	      trc, (unsigned long long)late[0]);
	ok(vkflow_synchronize(m, TIMEOUT_NS), "vkflow_synchronize");
	vkflow_tensor_close(busy);

	int64_t shape[1] = {N};
	vkflow_tensor i32 = 0;
	ok(vkflow_tensor_new(m, "int32", 1, shape, NULL, 0, VKFLOW_MEMORY_DEVICE, &i32), "vkflow_tensor_new");
	vkflow_tensor mixed[2] = {a, i32}, none[1] = {0};
	int rc = vkflow_op_call_async(m, "add", mixed, 2, none, 1, NULL);
	char msg[512];
	vkflow_last_error(msg, sizeof msg);
	CHECK(rc == VKFLOW_ERR_INVALID && none[0] == 0, "add float32 + int32: rc %d", rc);
	CHECK(strstr(msg, "ops.add") != NULL, "error message names the op: %s", msg);
	CHECK(vkflow_op_cache_stats(m, NULL) == VKFLOW_ERR_INVALID, "stats into NULL");
	uint64_t polled = 0, blocked = 0;
	CHECK(vkflow_wait_stats(m, &polled, NULL) == VKFLOW_ERR_INVALID, "wait stats into NULL");
	/* The reads above waited on the GPU: each wait is counted once, as
	 * polled or as blocked (VKFLOW_WAIT_SPIN). */
	if (ok(vkflow_wait_stats(m, &polled, &blocked), "vkflow_wait_stats"))
		CHECK(polled + blocked > 0, "no host wait counted (polled %llu, blocked %llu)",
		      (unsigned long long)polled, (unsigned long long)blocked);
	vkflow_tensor_close(i32);
	vkflow_tensor_close(a);
}

/* vkflow_set_env: only the variables a Manager reads, no '=' in a value; a
 * bad VKFLOW_WAIT_SPIN fails the next Manager; NULL unsets. */
static void env_case(void)
{
	CHECK(vkflow_set_env(NULL, "0") == VKFLOW_ERR_INVALID, "vkflow_set_env(NULL name)");
	CHECK(vkflow_set_env("PATH", "/bin") == VKFLOW_ERR_INVALID, "vkflow_set_env(PATH)");
	CHECK(vkflow_set_env("VKFLOW_WAIT_SPIN", "a=b") == VKFLOW_ERR_INVALID, "a value with '='");
	CHECK(vkflow_set_device_env("0=1") == VKFLOW_ERR_INVALID, "vkflow_set_device_env with '='");
	vkflow_manager m = 0;
	if (ok(vkflow_set_env("VKFLOW_WAIT_SPIN", "soon"), "vkflow_set_env(VKFLOW_WAIT_SPIN)"))
		CHECK(vkflow_manager_new(-1, 0, &m) == VKFLOW_ERR_INVALID && m == 0,
		      "a Manager with VKFLOW_WAIT_SPIN=soon");
	if (ok(vkflow_set_env("VKFLOW_WAIT_SPIN", "0"), "vkflow_set_env(VKFLOW_WAIT_SPIN, 0)") &&
	    ok(vkflow_manager_new(-1, 0, &m), "vkflow_manager_new with VKFLOW_WAIT_SPIN=0"))
		ok(vkflow_manager_close(m), "vkflow_manager_close");
	ok(vkflow_set_env("VKFLOW_WAIT_SPIN", NULL), "vkflow_set_env(VKFLOW_WAIT_SPIN, NULL)");
}

void eager_case(void)
{
	env_case();
	vkflow_manager m = 0;
	if (!ok(vkflow_manager_new(-1, VKFLOW_VALIDATION, &m), "vkflow_manager_new"))
		return;
	chain_case(m);
	overwrite_case(m);
	sync_and_errors_case(m);
	ok(vkflow_manager_close(m), "vkflow_manager_close");
	CHECK(vkflow_synchronize(m, TIMEOUT_NS) == VKFLOW_ERR_CLOSED, "vkflow_synchronize after close");
	uint64_t p = 0, b = 0;
	CHECK(vkflow_wait_stats(m, &p, &b) == VKFLOW_ERR_CLOSED, "vkflow_wait_stats after close");
}

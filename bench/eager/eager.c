/*
 * eager.c - vkflow's eager ops through the C API (libvkflow.so), for
 * bench/eager.sh (docs/BENCHMARKS.md, "Eager ops").
 *
 * Build (bench/eager.sh does it, against a libvkflow.so it builds itself):
 *   cc -O2 -std=c11 -Wall -Wextra -I capi -I dlpack -o OUT bench/eager/eager.c \
 *      -L LIBDIR -lvkflow -Wl,-rpath,LIBDIR
 *
 * Usage:
 *   eager [-benchtime SECONDS] [-run SUBSTRING]
 *
 * Workloads, on the Manager's default stream (the one every eager call of
 * the C API and of Python uses), float32, 1000 elements, memory "device":
 *   add1000_sync   vkflow_op_call_async("add", {a, b}) into a new output,
 *                  then vkflow_tensor_read of it (which waits for the op),
 *                  then vkflow_tensor_close: one op, submit + wait, as
 *                  baseline.c's dispatch1024.
 *   add_chain1000  x = add(x, y) 1000 times, each call a new output (the
 *                  previous x is closed right after the call that reads
 *                  it, which the C API allows), then one vkflow_tensor_read
 *                  of the last x: 1000 dependent ops, as baseline.c's
 *                  chain1000. ns/dispatch is per op call.
 *
 * Results go to stdout in Go's benchmark format, like baseline.c
 * (BenchmarkEagerC/<name>-<ncpu>\t<iters>\t<ns> ns/op[\t<x> ns/dispatch]),
 * the median of 5 batches, followed by the deltas of the eager counters of
 * vkflow_op_cache_stats over the 5 timed batches (prepared-op cache hits
 * and misses, host waits, submits), the op calls those batches made, and
 * the deltas of vkflow_wait_stats (host waits that ended while polling, and
 * that blocked). With VKFLOW_WAIT_SPIN=0 the names end in _nospin.
 * Diagnostics (per-batch spread, verification) go to stderr.
 */
#define _POSIX_C_SOURCE 200809L

#include "vkflow.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../baseline/harness.h"

#define N 1000          /* elements per tensor */
#define CHAIN_LEN 1000u /* op calls per chain */

static void check(int rc, const char *what)
{
    if (rc >= 0)
        return;
    char msg[1024];
    vkflow_last_error(msg, sizeof msg);
    fprintf(stderr, "eager: %s failed: %d: %s\n", what, rc, msg);
    exit(1);
}

typedef struct {
    vkflow_manager m;
    vkflow_tensor a, b; /* add1000_sync: a = 1, b = 2 */
    vkflow_tensor x0, y; /* add_chain1000: x0 = 0, y = 1 */
    float host[N];
    int sync_verified, chain_verified;
} Ctx;

static vkflow_tensor new_filled(vkflow_manager m, float v)
{
    float data[N];
    int64_t shape[1] = {N};
    for (int i = 0; i < N; i++)
        data[i] = v;
    vkflow_tensor t;
    check(vkflow_tensor_new(m, "float32", 1, shape, data, sizeof data, VKFLOW_MEMORY_DEVICE, &t),
          "vkflow_tensor_new");
    return t;
}

static void verify(const char *what, const float *got, float want, int all)
{
    for (int i = 0; i < (all ? N : 1); i++) {
        if (got[i] != want) {
            fprintf(stderr, "eager: %s: verification failed at %d: got %.9g want %.9g\n", what, i,
                    (double)got[i], (double)want);
            exit(1);
        }
    }
    if (all)
        fprintf(stderr, "eager: %s: verified %d elements\n", what, N);
}

/* One add, into a new output; the read waits for it. */
static void w_sync(Ctx *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        vkflow_tensor in[2] = {c->a, c->b}, out[1] = {0};
        check(vkflow_op_call_async(c->m, "add", in, 2, out, 1, NULL), "vkflow_op_call_async");
        check(vkflow_tensor_read(out[0], c->host, sizeof c->host), "vkflow_tensor_read");
        verify("add1000_sync", c->host, 3.0f, !c->sync_verified);
        c->sync_verified = 1;
        check(vkflow_tensor_close(out[0]), "vkflow_tensor_close");
    }
}

/* CHAIN_LEN dependent adds, each into a new output, then one read. */
static void w_chain(Ctx *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        vkflow_tensor x = c->x0;
        for (uint32_t k = 0; k < CHAIN_LEN; k++) {
            vkflow_tensor in[2] = {x, c->y}, out[1] = {0};
            check(vkflow_op_call_async(c->m, "add", in, 2, out, 1, NULL), "vkflow_op_call_async");
            if (x != c->x0)
                check(vkflow_tensor_close(x), "vkflow_tensor_close");
            x = out[0];
        }
        check(vkflow_tensor_read(x, c->host, sizeof c->host), "vkflow_tensor_read");
        verify("add_chain1000", c->host, (float)CHAIN_LEN, !c->chain_verified);
        c->chain_verified = 1;
        check(vkflow_tensor_close(x), "vkflow_tensor_close");
    }
}

typedef void (*WorkFn)(Ctx *, uint64_t);

typedef struct {
    const char *name;
    WorkFn fn;
    uint64_t calls_per_op; /* op calls per iteration */
} Workload;

static const Workload workloads[] = {
    {"add1000_sync", w_sync, 1},
    {"add_chain1000", w_chain, CHAIN_LEN},
};
#define NUM_WORKLOADS (sizeof workloads / sizeof workloads[0])

/* A workload and its context, as the harness's bench_fn sees them. */
typedef struct {
    Ctx *c;
    WorkFn fn;
} Bound;

static void run_bound(void *p, uint64_t n)
{
    Bound *b = p;
    b->fn(b->c, n);
}

/* As baseline.c's run_workload (harness.h), plus the eager counters over
 * the timed batches. */
static void run_workload(Ctx *c, const Workload *w, double benchtime_s, long ncpu)
{
    Bound b = {c, w->fn};
    uint64_t iters = bench_calibrate(run_bound, &b, benchtime_s);

    vkflow_op_stats s0, s1;
    uint64_t p0, b0, p1, b1;
    check(vkflow_op_cache_stats(c->m, &s0), "vkflow_op_cache_stats");
    check(vkflow_wait_stats(c->m, &p0, &b0), "vkflow_wait_stats");
    double ns_op[BENCH_BATCHES];
    bench_batches(run_bound, &b, iters, ns_op);
    check(vkflow_op_cache_stats(c->m, &s1), "vkflow_op_cache_stats");
    check(vkflow_wait_stats(c->m, &p1, &b1), "vkflow_wait_stats");
    double med = ns_op[BENCH_BATCHES / 2];
    /* With VKFLOW_WAIT_SPIN=0 (no polling) the names end in _nospin. */
    const char *env = getenv("VKFLOW_WAIT_SPIN");
    const char *suffix = env && strcmp(env, "0") == 0 ? "_nospin" : "";

    uint64_t calls = iters * BENCH_BATCHES * w->calls_per_op;
    uint64_t hits = s1.hits - s0.hits, misses = s1.misses - s0.misses;
    uint64_t waits = s1.host_waits - s0.host_waits, submits = s1.submits - s0.submits;
    printf("BenchmarkEagerC/%s%s-%ld\t%llu\t%.0f ns/op", w->name, suffix, ncpu, (unsigned long long)iters, med);
    if (w->calls_per_op > 1)
        printf("\t%.0f ns/dispatch", med / (double)w->calls_per_op);
    printf("\t%llu hits\t%llu misses\t%llu hostwaits\t%llu submits\t%llu calls\t%llu polled\t%llu blocked\n",
           (unsigned long long)hits, (unsigned long long)misses, (unsigned long long)waits,
           (unsigned long long)submits, (unsigned long long)calls, (unsigned long long)(p1 - p0),
           (unsigned long long)(b1 - b0));
    fflush(stdout);
    fprintf(stderr, "eager: C %s: batches ns/op min %.0f median %.0f max %.0f; cache evictions %llu, entries %lld\n",
            w->name, ns_op[0], med, ns_op[BENCH_BATCHES - 1],
            (unsigned long long)(s1.evictions - s0.evictions), (long long)s1.entries);
}

static void usage(void)
{
    fprintf(stderr, "usage: eager [-benchtime SECONDS] [-run SUBSTRING]\n");
    exit(2);
}

static double parse_benchtime(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0) || !isfinite(v))
        usage();
    if (*end == 's' && end[1] == '\0')
        end++;
    if (*end != '\0')
        usage();
    return v;
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    double benchtime = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-')
            a++;
        if (strcmp(a, "-benchtime") == 0 && i + 1 < argc)
            benchtime = parse_benchtime(argv[++i]);
        else if (strncmp(a, "-benchtime=", 11) == 0)
            benchtime = parse_benchtime(a + 11);
        else if (strcmp(a, "-run") == 0 && i + 1 < argc)
            filter = argv[++i];
        else if (strncmp(a, "-run=", 5) == 0)
            filter = a + 5;
        else
            usage();
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;

    static Ctx ctx;
    check(vkflow_manager_new(-1, 0, &ctx.m), "vkflow_manager_new");
    ctx.a = new_filled(ctx.m, 1.0f);
    ctx.b = new_filled(ctx.m, 2.0f);
    ctx.x0 = new_filled(ctx.m, 0.0f);
    ctx.y = new_filled(ctx.m, 1.0f);
    for (size_t i = 0; i < NUM_WORKLOADS; i++)
        if (!filter || strstr(workloads[i].name, filter))
            run_workload(&ctx, &workloads[i], benchtime, ncpu);
    check(vkflow_synchronize(ctx.m, -1), "vkflow_synchronize");
    check(vkflow_manager_close(ctx.m), "vkflow_manager_close");
    return 0;
}

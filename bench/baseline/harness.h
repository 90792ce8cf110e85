/* The timing harness of vkflow's C benchmark programs (baseline.c, ops.c,
 * bench/eager/eager.c), so that every C figure is timed the same way:
 * BENCH_WARMUP iterations, a calibration that grows the iteration count
 * until a batch takes a tenth of its share of the bench time, then
 * BENCH_BATCHES timed batches of benchtime / BENCH_BATCHES each; the
 * caller reports the median batch. A workload is a function that runs n
 * iterations on its context. */
#ifndef VKFLOW_BENCH_HARNESS_H
#define VKFLOW_BENCH_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_WARMUP 3
#define BENCH_BATCHES 5

typedef void (*bench_fn)(void *ctx, uint64_t n);

static double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double bench_time(bench_fn fn, void *ctx, uint64_t n)
{
    double t0 = bench_now_ns();
    fn(ctx, n);
    return bench_now_ns() - t0;
}

/* Runs the warm-up and the calibration; returns the iterations per batch. */
static uint64_t bench_calibrate(bench_fn fn, void *ctx, double benchtime_s)
{
    const double target = benchtime_s * 1e9 / BENCH_BATCHES;
    fn(ctx, BENCH_WARMUP);
    uint64_t n = 1;
    double t = bench_time(fn, ctx, n);
    while (t < target * 0.1 && n < 1000000000ull) {
        double per = t / (double)n;
        uint64_t next = per > 0 ? (uint64_t)(target * 0.2 / per) : n * 100;
        if (next < n * 2)
            next = n * 2;
        if (next > n * 100)
            next = n * 100;
        n = next;
        t = bench_time(fn, ctx, n);
    }
    double per = t / (double)n;
    uint64_t iters = per > 0 ? (uint64_t)llround(target / per) : n;
    return iters < 1 ? 1 : iters;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Times BENCH_BATCHES batches of iters; ns_op gets each batch's ns per
 * iteration, sorted (ns_op[BENCH_BATCHES / 2] is the median). */
static void bench_batches(bench_fn fn, void *ctx, uint64_t iters, double ns_op[BENCH_BATCHES])
{
    for (int b = 0; b < BENCH_BATCHES; b++)
        ns_op[b] = bench_time(fn, ctx, iters) / (double)iters;
    qsort(ns_op, BENCH_BATCHES, sizeof ns_op[0], bench_cmp);
}

#endif

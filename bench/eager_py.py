"""vkflow's eager ops from Python, for bench/eager.sh (docs/BENCHMARKS.md,
"Eager ops").

Usage: eager_py.py [-benchtime SECONDS] [-run SUBSTRING] [-profile]

Run with the source tree's package and a freshly built library, e.g.
PYTHONPATH=python VKFLOW_LIB=bench/out/eager/libvkflow.so /usr/bin/python3.

Workloads, on one Manager (``vkflow.Manager()``, no validation), float32,
1000 elements, memory "device", every call on the Manager's default stream:

  add1000_sync   ``c = vkflow.ops.add(a, b)``, then ``float(c.read()[0])`` (which
                 waits for the op), a new output each iteration (the last
                 one is freed when ``c`` is rebound): the synchronous small
                 op, against baseline.c's dispatch1024.
  add_chain1000  ``x = vkflow.ops.add(x, y)`` 1000 times (a new output each
                 time), then ``x.read()[0]``: 1000 dependent ops, against
                 baseline.c's chain1000. ns/dispatch is per op call.

Timing as baseline.c: 3 warm-up iterations, a calibration, then 5 batches of
about benchtime/5 seconds; the median batch's ns/op goes to stdout in Go's
benchmark format (BenchmarkEagerPy/<name>-<ncpu>\t<iters>\t<ns> ns/op...),
followed by the deltas of ``vkflow.ops.cache_stats`` over the 5 timed
batches (prepared-op cache hits and misses, host waits, submits), the op
calls those batches made, and the deltas of ``Manager.wait_stats`` (host
waits that ended while polling, and that blocked). With VKFLOW_WAIT_SPIN=0
the names end in ``_nospin``. Diagnostics go to stderr.

-profile: instead, time the parts of both loops with time.perf_counter_ns,
the benchmark's code interleaved with the same work through raw ctypes
calls (vkflow_op_call_async, vkflow_tensor_read, vkflow_tensor_close), and
print their medians to stdout (a breakdown for docs/BENCHMARKS.md).
"""

import os
import sys
import time

import numpy as np

import vkflow
from vkflow import ops

N = 1000
CHAIN_LEN = 1000
WARMUP_ITERS = 3
NUM_BATCHES = 5


class Ctx:
    def __init__(self, mgr):
        self.mgr = mgr
        self.a = mgr.tensor(np.full(N, 1, np.float32))
        self.b = mgr.tensor(np.full(N, 2, np.float32))
        self.x0 = mgr.tensor(np.zeros(N, np.float32))
        self.y = mgr.tensor(np.full(N, 1, np.float32))
        self.verified = set()

    def verify(self, name, t, want):
        if name in self.verified:
            v = t.read()[0]
            if v != want:
                sys.exit("eager_py: %s: got %r want %r" % (name, v, want))
            return
        got = t.read()
        if not (got == want).all():
            sys.exit("eager_py: %s: verification failed: %r, want %r" % (name, got[:4], want))
        print("eager_py: %s: verified %d elements" % (name, got.size), file=sys.stderr)
        self.verified.add(name)


def w_sync(c, n):
    a, b = c.a, c.b
    if "add1000_sync" not in c.verified:
        c.verify("add1000_sync", ops.add(a, b), 3.0)
        n -= 1
    for _ in range(n):
        t = ops.add(a, b)
        # float(): the check compares Python floats, as eager.c compares C
        # floats. Comparing the NumPy scalar itself (``t.read()[0] != 3.0``)
        # runs NumPy's ufunc machinery: 5.3–5.9 µs right after the wait here
        # (0.9 µs hot), against 0.6–0.8 µs for float(); NumPy's cost, not the op's.
        if float(t.read()[0]) != 3.0:
            sys.exit("eager_py: add1000_sync: wrong result")


def w_chain(c, n):
    y = c.y
    for _ in range(n):
        x = c.x0
        for _ in range(CHAIN_LEN):
            x = ops.add(x, y)
        if "add_chain1000" not in c.verified:
            c.verify("add_chain1000", x, float(CHAIN_LEN))
        elif float(x.read()[0]) != CHAIN_LEN:
            sys.exit("eager_py: add_chain1000: wrong result")


WORKLOADS = [("add1000_sync", w_sync, 1), ("add_chain1000", w_chain, CHAIN_LEN)]

# With VKFLOW_WAIT_SPIN=0 (host waits sleep at once, no polling) the
# benchmark names get this suffix, so that a run may hold both.
SUFFIX = "_nospin" if os.environ.get("VKFLOW_WAIT_SPIN", "").strip() == "0" else ""


def time_batch(c, fn, n):
    t0 = time.perf_counter_ns()
    fn(c, n)
    return time.perf_counter_ns() - t0


def run_workload(c, name, fn, calls_per_op, benchtime, ncpu):
    """As baseline.c's run_workload, plus the eager counters."""
    target = benchtime * 1e9 / NUM_BATCHES
    fn(c, WARMUP_ITERS)
    n = 1
    t = time_batch(c, fn, n)
    while t < target * 0.1 and n < 10**9:
        per = t / n
        nxt = int(target * 0.2 / per) if per > 0 else n * 100
        n = min(max(nxt, n * 2), n * 100)
        t = time_batch(c, fn, n)
    per = t / n
    iters = max(1, round(target / per)) if per > 0 else n

    s0, w0 = ops.cache_stats(c.mgr), c.mgr.wait_stats()
    ns = sorted(time_batch(c, fn, iters) / iters for _ in range(NUM_BATCHES))
    s1, w1 = ops.cache_stats(c.mgr), c.mgr.wait_stats()
    med = ns[NUM_BATCHES // 2]
    d = {k: s1[k] - s0[k] for k in ("hits", "misses", "evictions", "submits", "host_waits")}
    calls = iters * NUM_BATCHES * calls_per_op
    line = "BenchmarkEagerPy/%s%s-%d\t%d\t%.0f ns/op" % (name, SUFFIX, ncpu, iters, med)
    if calls_per_op > 1:
        line += "\t%.0f ns/dispatch" % (med / calls_per_op)
    line += "\t%d hits\t%d misses\t%d hostwaits\t%d submits\t%d calls" % (
        d["hits"], d["misses"], d["host_waits"], d["submits"], calls)
    line += "\t%d polled\t%d blocked" % (w1["polled"] - w0["polled"], w1["blocked"] - w0["blocked"])
    print(line, flush=True)
    print("eager_py: %s: batches ns/op min %.0f median %.0f max %.0f; cache evictions %d, entries %d"
          % (name, ns[0], med, ns[-1], d["evictions"], s1["entries"]), file=sys.stderr)


def profile(c, iters=2000):
    """Medians of the parts of the two loops, in µs: the benchmark's
    iterations interleaved with the same work through raw ctypes calls."""
    from ctypes import byref, c_int32, c_uint64
    from vkflow import Tensor, _lib
    L = _lib.lib()
    a, b, y, h = c.a, c.b, c.y, c.mgr._h()
    pc = time.perf_counter_ns
    parts = {}

    def add(k, v):
        parts.setdefault(k, []).append(v)

    def raw_call(x_h, y_h):
        in_h = (c_uint64 * 2)(x_h, y_h)
        out_h = (c_uint64 * 1)(0)
        if L.op_call_async(h, b"add", in_h, 2, out_h, 1, None) < 0:
            sys.exit("eager_py: op_call_async failed")
        return out_h[0]

    n = c_int32()
    for i in range(iters + 50):
        rec = i >= 50
        t0 = pc()
        t = ops.add(a, b)
        t1 = pc()
        t.read()[0]
        t2 = pc()
        del t
        t3 = pc()
        o = raw_call(a._h(), b._h())
        u1 = pc()
        out = np.empty((N,), dtype="float32")
        u2 = pc()
        L.tensor_read(o, out.ctypes.data, out.nbytes)
        u3 = pc()
        L.tensor_close(o)
        u4 = pc()
        o = raw_call(a._h(), b._h())
        v1 = pc()
        w = Tensor._wrap(c.mgr, o)
        v2 = pc()
        L.tensor_read(o, out.ctypes.data, out.nbytes)
        del w
        v3 = pc()
        L.manager_queue_count(h, byref(n))
        v4 = pc()
        if rec:
            add("sync: ops.add + read()[0] + del (the benchmark's iteration)", t3 - t0)
            add("sync:   ops.add", t1 - t0)
            add("sync:   read()[0]", t2 - t1)
            add("sync:   del (vkflow_tensor_close)", t3 - t2)
            add("sync: raw ctypes op_call_async + np.empty + tensor_read + close", u4 - t3)
            add("sync:   vkflow_op_call_async", u1 - t3)
            add("sync:   np.empty", u2 - u1)
            add("sync:   vkflow_tensor_read (waits)", u3 - u2)
            add("sync:   vkflow_tensor_close", u4 - u3)
            add("Tensor._wrap of the output (vkflow_tensor_info, adopt)", v2 - v1)
            add("one trivial ctypes call (vkflow_manager_queue_count)", v4 - v3)
    for i in range(20 if iters > 100 else 2):
        x = c.x0
        for _ in range(CHAIN_LEN):
            t0 = pc()
            x = ops.add(x, y)
            add("chain: ops.add (returns once submitted)", pc() - t0)
        x.read()
        xh = raw_call(c.x0._h(), y._h())
        for _ in range(CHAIN_LEN - 1):
            t0 = pc()
            o = raw_call(xh, y._h())
            add("chain: raw ctypes vkflow_op_call_async", pc() - t0)
            L.tensor_close(xh)
            xh = o
        L.tensor_read(xh, out.ctypes.data, out.nbytes)
        L.tensor_close(xh)
    for k, v in parts.items():
        v.sort()
        print("%-66s %8.1f µs (p25 %.1f, p75 %.1f)" % (
            k, v[len(v) // 2] / 1e3, v[len(v) // 4] / 1e3, v[3 * len(v) // 4] / 1e3))


def main(argv):
    benchtime, filt, prof = 1.0, None, False
    i = 0
    while i < len(argv):
        a = argv[i].lstrip("-")
        if a == "benchtime" and i + 1 < len(argv):
            benchtime = float(argv[i + 1].rstrip("s"))
            i += 1
        elif a == "run" and i + 1 < len(argv):
            filt = argv[i + 1]
            i += 1
        elif a == "profile":
            prof = True
        else:
            sys.exit("usage: eager_py.py [-benchtime SECONDS] [-run SUBSTRING] [-profile]")
        i += 1
    if not benchtime > 0:
        sys.exit("eager_py: -benchtime must be > 0")
    ncpu = os.cpu_count() or 1
    with vkflow.Manager() as mgr:
        c = Ctx(mgr)
        if prof:
            profile(c)
        else:
            for name, fn, calls in WORKLOADS:
                if filt is None or filt in name:
                    run_workload(c, name, fn, calls, benchtime, ncpu)
        vkflow.synchronize(mgr)


if __name__ == "__main__":
    main(sys.argv[1:])

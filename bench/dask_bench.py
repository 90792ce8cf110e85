"""The Dask benchmarks, for bench/dask.sh (docs/DISTRIBUTED.md, "Measured").

Usage: dask_bench.py [-rounds N] [-size POINTS] [-mib MIB]

One LocalCluster (2 worker processes, 1 thread each, 127.0.0.1, vkflow.dask
preloaded), used by every measurement, interleaved round by round:

  kmeans   examples/dask/kmeans.py's k-means (the same code, loaded from
           the file) on both workers: vkflow chunks against NumPy chunks,
           seconds for the chunks' generation and for the Lloyd
           iterations; and vkflow chunks on one worker (persist and
           compute restricted to it) against both workers.
  transfer a MIB MiB float32 chunk made on worker A (a vkflow tensor on
           A's device, or a NumPy array), then needed by a task pinned to
           worker B: the time of B's fetch from A's transfer log
           (Worker.transfer_incoming_log: request, A's serialization, the
           TCP move, B's deserialization, for a tensor onto B's device),
           and MiB/s. A fresh chunk every round, so B never has it.

  roundtrip the same chunk serialized and deserialized in the client
           process by Dask's protocol functions: vkflow.dask's serializer
           ("dask") against pickle (Tensor.__reduce__), for a tensor and
           for a NumPy array.

Prints the per-round figures and one line per measurement
(``name<TAB>median<TAB>min<TAB>max<TAB>unit``) to stderr, and the markdown
table with the ratios to stdout.
"""

import argparse
import os
import statistics
import sys
import time
import types
import uuid

import numpy as np

import vkflow
import vkflow.dask
from distributed import Client, LocalCluster, wait

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "dask", "kmeans.py")


def load_example():
    """examples/dask/kmeans.py as a module that is not importable by name,
    so cloudpickle sends its functions to the workers by value."""
    mod = types.ModuleType("vkflow_bench_kmeans")
    mod.__file__ = EXAMPLE
    with open(EXAMPLE) as f:
        exec(compile(f.read(), EXAMPLE, "exec"), mod.__dict__)
    return mod


def make_chunk(n, kind, tag):
    """A float32 chunk of n elements on the worker running it (tag makes
    every call a new key)."""
    a = np.arange(n, dtype=np.float32)
    a[0] = len(tag)
    return vkflow.asarray(a) if kind == "vkflow" else a


def chunk_sum_first(t):
    return float(np.asarray(t[:1])[0]) + t.shape[0]


def last_fetch(dask_worker):
    log = dask_worker.transfer_incoming_log
    return dict(log[-1]) if log else None


def transfer(client, a, b, nbytes, kind):
    """Seconds of worker b's fetch of a fresh nbytes chunk held by worker a."""
    tag = uuid.uuid4().hex
    src = client.submit(make_chunk, nbytes // 4, kind, tag, workers=[a], pure=False)
    wait(src)
    before = client.run(last_fetch, workers=[b])[b]
    res = client.submit(chunk_sum_first, src, workers=[b], allow_other_workers=False,
                        pure=False)
    res.result()
    entry = client.run(last_fetch, workers=[b])[b]
    if entry is None or entry == before or entry.get("who") != a:
        raise RuntimeError("dask_bench: no fetch from %s in %s's transfer log" % (a, b))
    got = sum(entry["keys"].values())
    if got < nbytes:
        raise RuntimeError("dask_bench: the fetch moved %d bytes, want %d" % (got, nbytes))
    del src, res
    return entry["duration"]


def roundtrip(x, serializers):
    """Seconds of serialize + deserialize of x in this process (Dask's
    protocol functions, the given serializer family), checked."""
    from distributed.protocol import deserialize, serialize
    t0 = time.perf_counter()
    header, frames = serialize(x, serializers=serializers, on_error="raise")
    y = deserialize(header, frames, deserializers=serializers)
    t1 = time.perf_counter()
    if header.get("serializer") != serializers[0]:
        raise RuntimeError("dask_bench: serialized by %r, want %r"
                           % (header.get("serializer"), serializers[0]))
    if type(y) is not type(x) or y.shape != x.shape:
        raise RuntimeError("dask_bench: the round trip gave %r" % type(y))
    return t1 - t0


def table(results, opt):
    """The markdown table: medians (min-max) and the ratios."""
    def med(name):
        return statistics.median(results[name][1])

    def row(label, name, fmt="%.3f"):
        unit, vals = results[name]
        return "| %s | %s %s | %s-%s |" % (label, fmt % med(name), unit, fmt % min(vals),
                                           fmt % max(vals))
    lines = [
        "| measurement | median | range |",
        "|---|---|---|",
        row("k-means, 2 workers, vkflow chunks: iterations", "kmeans_vkflow_2w_iter_s"),
        row("k-means, 2 workers, NumPy chunks: iterations", "kmeans_numpy_2w_iter_s"),
        row("k-means, 1 worker, vkflow chunks: iterations", "kmeans_vkflow_1w_iter_s"),
        row("k-means, 2 workers, vkflow chunks: generation", "kmeans_vkflow_2w_gen_s"),
        row("k-means, 2 workers, NumPy chunks: generation", "kmeans_numpy_2w_gen_s"),
        row("k-means, 1 worker, vkflow chunks: generation", "kmeans_vkflow_1w_gen_s"),
        row("%d MiB chunk A->B, vkflow tensor (vkflow.dask)" % opt.mib, "transfer_vkflow_mibps",
            "%.0f"),
        row("%d MiB chunk A->B, NumPy array (Dask's serializer)" % opt.mib,
            "transfer_numpy_mibps", "%.0f"),
    ]
    for kind in ("vkflow", "numpy"):
        for ser in ("dask", "pickle"):
            name = "roundtrip_%s_%s_mibps" % (kind, ser)
            note = " (NumPy: views, nothing copied)" if kind == "numpy" else ""
            lines.append(row("%d MiB serialize+deserialize, %s, %s serializer, in process%s"
                             % (opt.mib, kind, ser, note), name, "%.0f"))
    lines += [
        "",
        "Ratios (medians): k-means iterations vkflow/NumPy chunks %.2fx; "
        "1 worker / 2 workers (vkflow) %.2fx; transfer time vkflow/NumPy %.2fx; "
        "in-process round trip of a tensor, pickle/vkflow.dask %.2fx."
        % (med("kmeans_vkflow_2w_iter_s") / med("kmeans_numpy_2w_iter_s"),
           med("kmeans_vkflow_1w_iter_s") / med("kmeans_vkflow_2w_iter_s"),
           med("transfer_vkflow_s") / med("transfer_numpy_s"),
           med("roundtrip_vkflow_pickle_s") / med("roundtrip_vkflow_dask_s")),
    ]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-rounds", type=int, default=3)
    p.add_argument("-size", type=int, default=200_000)
    p.add_argument("-mib", type=int, default=16)
    opt = p.parse_args()

    km = load_example()
    ex = km.parse_args(["--size", str(opt.size), "--no-progress"])
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, preload=["vkflow.dask"])
    client = Client(cluster)
    results = {}

    def add(name, value, unit):
        results.setdefault(name, (unit, []))[1].append(value)

    try:
        client.register_worker_plugin(vkflow.dask.DevicePlugin())
        a, b = sorted(client.scheduler_info()["workers"])
        nbytes = opt.mib << 20
        want = km.reference(ex.size, ex.dim, ex.chunk, ex.seed, ex.k, ex.iters)
        for _ in range(2):  # warm-up: kernels compiled, both kinds once
            transfer(client, a, b, nbytes, "vkflow")
            transfer(client, a, b, nbytes, "numpy")
        for r in range(opt.rounds):
            order = [("vkflow", None), ("numpy", None), ("vkflow", [a])]
            if r % 2:
                order.reverse()
            for kind, workers in order:
                ex.chunks = kind
                c, tgen, titer = km.run(client, ex, progress=False, workers=workers)
                err = float(np.max(np.abs(c - want)))
                if err > 1e-4 * float(np.max(np.abs(want))):
                    raise RuntimeError("dask_bench: k-means (%s) off NumPy by %g" % (kind, err))
                tag = "kmeans_%s_%s" % (kind, "1w" if workers else "2w")
                add(tag + "_iter_s", titer, "s")
                add(tag + "_gen_s", tgen, "s")
                print("round %d %s: generate %.3f s, iterations %.3f s, err %.2g"
                      % (r + 1, tag, tgen, titer, err), file=sys.stderr)
            for kind in (("vkflow", "numpy") if r % 2 == 0 else ("numpy", "vkflow")):
                secs = [transfer(client, a, b, nbytes, kind) for _ in range(3)]
                for s in secs:
                    add("transfer_%s_s" % kind, s, "s")
                    add("transfer_%s_mibps" % kind, opt.mib / s, "MiB/s")
                print("round %d transfer %s: %s s" % (r + 1, kind,
                                                       " ".join("%.4f" % s for s in secs)),
                      file=sys.stderr)
            host = np.arange(nbytes // 4, dtype=np.float32)
            chunks = {"vkflow": vkflow.asarray(host), "numpy": host}
            for kind in ("vkflow", "numpy"):
                for ser in ("dask", "pickle"):
                    secs = [roundtrip(chunks[kind], [ser]) for _ in range(3)]
                    for s in secs:
                        add("roundtrip_%s_%s_s" % (kind, ser), s, "s")
                        add("roundtrip_%s_%s_mibps" % (kind, ser), opt.mib / s, "MiB/s")
            del chunks
    finally:
        client.close()
        cluster.close()
    print("# rounds=%d size=%d dim=%d chunk=%d k=%d iters=%d mib=%d"
          % (opt.rounds, ex.size, ex.dim, ex.chunk, ex.k, ex.iters, opt.mib), file=sys.stderr)
    for name, (unit, vals) in results.items():
        print("%s\t%.6g\t%.6g\t%.6g\t%s" % (name, statistics.median(vals), min(vals), max(vals),
                                            unit), file=sys.stderr)
    print("Dask on a 2-worker LocalCluster (127.0.0.1): k-means %d x %d float32 in chunks of %d, "
          "k=%d, %d iterations; %d rounds.\n" % (ex.size, ex.dim, ex.chunk, ex.k, ex.iters,
                                                  opt.rounds))
    print(table(results, opt))


if __name__ == "__main__":
    main()

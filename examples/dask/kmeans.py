"""k-means on a Dask cluster whose chunks are vkflow tensors on each
worker's device (examples/dask/README.md; docs/DISTRIBUTED.md).

The points are generated ON THE WORKERS: block b of the (size, dim) float32
array is made by a counter-based hash of its global element indices, so any
block can be rebuilt anywhere from (seed, row range) alone, on the device
(vkflow chunks) or in NumPy (the check, and the NumPy-chunk side of
bench/dask.sh), bit for bit. No chunk of the data ever passes through the
client. Each Lloyd iteration sends the k centroids (k x dim floats) into
the graph; each chunk computes its distances to them by a matmul, the
argmin, and its per-cluster sums and counts (one-hot matmul) on its
worker's device; Dask tree-sums the (k, dim + 1) partials and only that
small array reaches the client, which divides and starts the next
iteration.

Usage:
    python3 kmeans.py                         # LocalCluster, 2 workers, small size
    python3 kmeans.py --size 4000000 --chunk 250000 --workers 2
    python3 kmeans.py --scheduler tcp://scheduler-host:8786   # an existing cluster
    python3 kmeans.py --chunks numpy          # NumPy chunks, same generator

The last line printed is the summary (time and throughput) with the largest
difference from NumPy's k-means on the same generated data (--no-check
skips it; the reference is computed on the client, one block at a time).
--save FILE writes the final centroids (.npy). Exit status 1 when the
check fails.
"""

import argparse
import math
import sys
import time

import numpy as np

import dask.array as da

import vkflow
import vkflow.array_api as xa
import vkflow.dask

# Hash constants (a 32-bit integer finalizer: xor-shift, multiply, twice).
_M1, _M2 = 0x7FEB352D, 0x846CA68B
# Two streams of the hash: one for the points' labels, one for their noise.
_LABEL_SALT, _NOISE_SALT = 0x9E3779B9, 0x85EBCA6B


def namespace(x):
    """The array namespace of a chunk: vkflow.array_api for a vkflow tensor,
    numpy for a NumPy array."""
    ns = getattr(x, "__array_namespace__", None)
    return ns() if ns is not None else np


def _hash(h):
    h = h ^ (h >> 16)
    h = h * _M1
    h = h ^ (h >> 15)
    h = h * _M2
    return h ^ (h >> 16)


def _on(device):
    return {} if device is None else {"device": device}


def _uniform(xp, start, stop, salt, device):
    """Uniform floats in [0, 1) for the counters start..stop-1 (24 random
    bits each, exact in float32, the same in every namespace)."""
    i = xp.arange(start, stop, dtype=xp.uint32, **_on(device))
    h = _hash(i ^ xp.asarray(salt, dtype=xp.uint32, **_on(device)))
    return (h >> 8).astype(xp.float32) * np.float32(1.0 / (1 << 24))


def true_centers(seed, k, dim):
    """The k cluster centres the points are drawn around (host, small)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((k, dim)) * 4.0).astype(np.float32)


def _salt(seed):
    return (seed * 2654435761) & 0xFFFFFFFF


def labels(xp, row0, rows, k, seed, device=None):
    """The true cluster (0..k-1, uint32) of rows row0..row0+rows-1."""
    lab = _hash(xp.arange(row0, row0 + rows, dtype=xp.uint32, **_on(device))
                ^ xp.asarray(_salt(seed) ^ _LABEL_SALT, dtype=xp.uint32, **_on(device)))
    return lab % np.uint32(k)


def make_block(xp, row0, rows, dim, centers, seed, spread=1.0, device=None):
    """Rows row0..row0+rows-1 of the data set: each row is one of the
    centres (picked by the hash of its row index) plus uniform noise in
    [-spread, spread) per coordinate (hash of its element index). xp is
    vkflow.array_api (device gives the Manager) or numpy."""
    salt = _salt(seed)
    lab = labels(xp, row0, rows, centers.shape[0], seed, device)
    c = xp.asarray(centers, **_on(device))
    base = xp.take(c, lab, axis=0)
    u = _uniform(xp, row0 * dim, (row0 + rows) * dim, (salt ^ _NOISE_SALT) & 0xFFFFFFFF, device)
    noise = xp.reshape(u, (rows, dim)) * np.float32(2.0 * spread) - np.float32(spread)
    return base + noise


def lloyd_partial(x, c):
    """One chunk's share of a Lloyd step: for the (rows, dim) chunk x and the
    (k, dim) centroids c (NumPy, from the client), the (1, k, dim + 1) array
    of per-cluster coordinate sums (columns :dim) and counts (column dim),
    computed in x's namespace (on x's device for a vkflow tensor)."""
    xp = namespace(x)
    k = c.shape[0]
    on = {} if xp is np else {"device": x.device}
    cc = xp.asarray(c, **on)
    # argmin_j |x - c_j|^2 = argmin_j (|c_j|^2 - 2 x.c_j): one matmul.
    d2 = xp.sum(cc * cc, axis=1)[None, :] - np.float32(2.0) * (x @ cc.T)
    lab = xp.argmin(d2, axis=1)
    onehot = (lab[:, None] == xp.arange(k, dtype=lab.dtype, **on)[None, :]).astype(x.dtype)
    # Per-cluster sums as k masked column sums: onehot.T @ x is the same
    # product, but a (k, rows) x (rows, dim) matmul with its long inner
    # dimension runs about 6x slower than these reductions on lavapipe.
    sums = xp.stack([xp.sum(x * onehot[:, j:j + 1], axis=0) for j in range(k)])
    counts = xp.sum(onehot, axis=0)
    cat = getattr(xp, "concat", None) or xp.concatenate
    return xp.reshape(cat([sums, counts[:, None]], axis=1), (1, k, x.shape[1] + 1))


def to_host(t):
    """A chunk as a NumPy array (the final, small result only)."""
    return np.asarray(t)


def update(part, c):
    """New centroids from the summed partials; an empty cluster keeps its
    old centroid."""
    sums, counts = part[:, :-1], part[:, -1:]
    return np.where(counts > 0, sums / np.maximum(counts, 1), c).astype(np.float32)


def initial_centroids(seed, k, dim):
    """The starting centroids: for each cluster, its first generated point
    (a noisy point, not the centre), found from the labels alone. Starting
    from one point per cluster keeps every point's assignment clear of
    ties, so vkflow and NumPy assign alike and differ only by round-off."""
    centers = true_centers(seed, k, dim)
    lab = labels(np, 0, 64 * k, k, seed)
    rows = [int(np.argmax(lab == j)) if np.any(lab == j) else j for j in range(k)]
    return np.stack([make_block(np, r, 1, dim, centers, seed)[0] for r in rows])


def _gen_chunk(block_info=None, dim=0, centers=None, seed=0, kind="vkflow"):
    loc = block_info[None]["array-location"][0]
    rows = loc[1] - loc[0]
    if kind == "numpy":
        return make_block(np, loc[0], rows, dim, centers, seed)
    # The worker's own device (vkflow.dask.DevicePlugin sets VKFLOW_DEVICE).
    return make_block(xa, loc[0], rows, dim, centers, seed, device=vkflow.default_device())


def points(size, dim, chunk, seed, k, kind="vkflow"):
    """The lazy (size, dim) float32 Dask array, generated per chunk on the
    workers."""
    nb = math.ceil(size / chunk)
    row_chunks = tuple(min(chunk, size - i * chunk) for i in range(nb))
    if kind == "numpy":
        meta = np.empty((0, 0), np.float32)
    else:
        meta = vkflow.empty((0, 0), dtype="float32")
    return da.map_blocks(_gen_chunk, chunks=(row_chunks, (dim,)), dtype=np.float32, meta=meta,
                         dim=dim, centers=true_centers(seed, k, dim), seed=seed, kind=kind)


def lloyd(x, c0, iters, compute, progress=None):
    """iters Lloyd steps on the persisted Dask array x from the centroids c0
    (NumPy). Each step is one graph: the per-chunk partials, a tree sum and
    the final (k, dim + 1) array as NumPy, run by compute(graph);
    progress(i) is called after step i."""
    c = c0
    nb = x.numblocks[0]
    k, dim = c0.shape
    for i in range(iters):
        part = x.map_blocks(lloyd_partial, c, chunks=((1,) * nb, (k,), (dim + 1,)),
                            new_axis=[2], dtype=np.float32, meta=x._meta.reshape((0, 0, 0)))
        total = part.sum(axis=0).map_blocks(to_host, dtype=np.float32,
                                            meta=np.empty((0, 0), np.float32))
        c = update(compute(total), c)
        if progress:
            progress(i + 1)
    return c


class IterationBar:
    """A one-line text progress bar over the Lloyd iterations (distributed's
    progress bar counts the persisted chunks as done work)."""

    def __init__(self, total, out=sys.stdout, width=40):
        self.total, self.out, self.width = total, out, width
        self.t0 = time.perf_counter()
        self(0)

    def __call__(self, done):
        n = self.width * done // self.total
        self.out.write("\r[%s%s] | iteration %d/%d | %.1fs" % (
            "#" * n, " " * (self.width - n), done, self.total, time.perf_counter() - self.t0))
        if done == self.total:
            self.out.write("\n")
        self.out.flush()


def reference(size, dim, chunk, seed, k, iters):
    """The same k-means in NumPy on the client, one generated block at a
    time (the check)."""
    centers = true_centers(seed, k, dim)
    c = initial_centroids(seed, k, dim)
    for _ in range(iters):
        part = np.zeros((k, dim + 1), np.float32)
        for row0 in range(0, size, chunk):
            xb = make_block(np, row0, min(chunk, size - row0), dim, centers, seed)
            part += lloyd_partial(xb, c)[0]
        c = update(part, c)
    return c


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="join this running scheduler (default: a LocalCluster on 127.0.0.1)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    p.add_argument("--devices", metavar="LIST",
                   help="devices dealt to each host's workers, e.g. 0,1 (VKFLOW_DEVICE values; "
                        "default: every worker's default device)")
    p.add_argument("--size", type=int, default=200_000, help="points (default 200000)")
    p.add_argument("--dim", type=int, default=16, help="coordinates per point (default 16)")
    p.add_argument("--chunk", type=int, default=25_000, help="points per chunk (default 25000)")
    p.add_argument("--k", type=int, default=8, help="clusters (default 8)")
    p.add_argument("--iters", type=int, default=5, help="Lloyd iterations (default 5)")
    p.add_argument("--seed", type=int, default=1, help="data seed (default 1)")
    p.add_argument("--chunks", choices=("vkflow", "numpy"), default="vkflow",
                   help="chunk type (default vkflow; numpy for comparison)")
    p.add_argument("--no-check", action="store_true", help="skip the NumPy check")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--save", metavar="FILE", help="write the final centroids (.npy)")
    p.add_argument("--rtol", type=float, default=1e-4,
                   help="check tolerance, relative to the largest centroid coordinate")
    args = p.parse_args(argv)
    for name in ("workers", "size", "dim", "chunk", "k", "iters"):
        if getattr(args, name) < 1:
            p.error("--%s must be at least 1" % name)
    return args


def start_cluster(workers):
    """A LocalCluster on 127.0.0.1: one single-threaded worker process per
    device, each with vkflow.dask preloaded (serializers, sizeof)."""
    from distributed import LocalCluster
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                        host="127.0.0.1", dashboard_address=None, preload=["vkflow.dask"])


def connect(args):
    """(client, cluster or None): a new LocalCluster, or the scheduler at
    --scheduler. vkflow.dask.DevicePlugin is registered either way: it
    imports the registrations on every worker and, with --devices, deals
    the devices to each host's workers (VKFLOW_DEVICE)."""
    from distributed import Client
    cluster = None if args.scheduler else start_cluster(args.workers)
    client = Client(args.scheduler or cluster)
    try:
        client.register_worker_plugin(vkflow.dask.DevicePlugin(devices=args.devices))
    except BaseException:
        client.close()
        if cluster is not None:
            cluster.close()
        raise
    return client, cluster


def run(client, args, progress=True, workers=None):
    """Generates the data on the workers (all of them, or those listed in
    workers), runs the iterations, returns (centroids, seconds for
    generation, seconds for the iterations)."""
    from distributed import progress as dprogress, wait

    x = points(args.size, args.dim, args.chunk, args.seed, args.k, kind=args.chunks)
    t0 = time.perf_counter()
    x = client.persist(x, workers=workers)
    if progress:
        dprogress(x)
    wait(x)
    t1 = time.perf_counter()
    if progress:
        print(file=sys.stdout)  # distributed's bar ends without a newline
    c = lloyd(x, initial_centroids(args.seed, args.k, args.dim), args.iters,
              lambda arr: client.compute(arr, workers=workers).result(),
              IterationBar(args.iters) if progress else None)
    t2 = time.perf_counter()
    del x
    return c, t1 - t0, t2 - t1


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    client, cluster = connect(args)
    try:
        nworkers = len(client.scheduler_info()["workers"])
        c, tgen, titer = run(client, args, progress=not args.no_progress)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    if args.save:
        np.save(args.save, c)
    mib = args.size * args.dim * 4 / 2**20
    nb = math.ceil(args.size / args.chunk)
    line = ("kmeans: %d x %d float32 (%.1f MiB, %d %s chunks) on %d workers, k=%d: "
            "generate %.2f s, %d iterations %.2f s (%.1f M points/s, %.1f MiB/s)"
            % (args.size, args.dim, mib, nb, args.chunks, nworkers, args.k, tgen,
               args.iters, titer, args.size * args.iters / titer / 1e6,
               mib * args.iters / titer))
    ok = True
    if not args.no_check:
        want = reference(args.size, args.dim, args.chunk, args.seed, args.k, args.iters)
        err = float(np.max(np.abs(c - want)))
        tol = args.rtol * float(np.max(np.abs(want)))
        ok = err <= tol
        verdict = "ok" if ok else "FAILED, tolerance %.2g" % tol
        line += "; max |c - NumPy| %.2g (%s)" % (err, verdict)
    print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""A chunk moved between two processes on one machine and one device: the
bytes (vkflow.dask's serializers) against an exported-memory handle, for
bench/dask.sh (docs/DISTRIBUTED.md, "Exported-memory handles").

Usage: dask_handle.py [-rounds N] [-mib 1,16,128]

Process A (this one) holds a float32 chunk; process B (spawned) connects to
A over a Unix socket. Each move is timed in A, from before A's first step
to B's acknowledgement, so every variant ends with a usable tensor in B,
its GPU work complete:

  bytes          A: vkflow.dask.serialize_tensor, the header (pickled) and
                 the frame over the socket; B: receives the frame into a new
                 buffer, vkflow.dask.deserialize_tensor, vkflow.synchronize.
  alias          A: the chunk is already in exportable memory: export_memory,
                 send_handle; B: recv_handle, import_memory (B's tensor
                 aliases A's memory).
  in+alias       as alias, but A's chunk is an ordinary tensor: A first
                 makes an exportable tensor and copies the chunk into it on
                 the device (what a serializer would have to do).
  alias+own      as alias, then B copies the alias into a new tensor of its
                 own on the device and closes the alias (the chunk outlives
                 A's).
  in+alias+own   both copies.

B checks the first and last elements of every tensor it got after the
acknowledgement (outside the timing). Rounds interleave the variants (the
order alternates); one warm-up round is dropped. Prints per-round figures to
stderr and the markdown table (median MiB/s, ranges, handle/bytes ratios) to
stdout.
"""

import argparse
import multiprocessing
import os
import pickle
import socket
import statistics
import struct
import sys
import tempfile
import time

import numpy as np

import vkflow
import vkflow.dask

VARIANTS = ("bytes", "alias", "in+alias", "alias+own", "in+alias+own")
_LEN = struct.Struct("<Q")


def send_msg(sock, obj):
    data = pickle.dumps(obj)
    sock.sendall(_LEN.pack(len(data)) + data)


def recv_exact(sock, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError("dask_handle: the peer closed the socket")
        got += k
    return buf


def recv_msg(sock):
    (n,) = _LEN.unpack(recv_exact(sock, _LEN.size))
    return pickle.loads(recv_exact(sock, n))


def device_copy(mgr, src):
    """A new device tensor of mgr holding src, copied on the device."""
    dst = mgr.tensor(src.shape, dtype=src.dtype)
    seq = mgr.sequence()
    seq.copy(src, dst).eval()
    seq.close()
    return dst


# --- B ------------------------------------------------------------------------

def consumer(path):
    """Process B: answers A's moves until A sends None."""
    mgr = vkflow.default_device()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    while True:
        msg = recv_msg(sock)
        if msg is None:
            break
        kind, n, tag = msg["kind"], msg["n"], msg["tag"]
        if kind == "bytes":
            frame = recv_exact(sock, msg["nbytes"])
            t = vkflow.dask.deserialize_tensor(msg["header"], [frame])
            vkflow.synchronize(mgr)
            held = [t]
        else:
            h = vkflow.recv_handle(sock)
            alias = mgr.import_memory(h, "float32", (n,))
            held = [alias]
            if kind.endswith("+own"):
                own = device_copy(mgr, alias)
                alias.close()
                held = [own]
        sock.sendall(b"k")  # A's clock stops here
        a = np.asarray(held[0])
        ok = a.shape == (n,) and a[0] == tag and a[-1] == np.float32(n - 1)
        sock.sendall(b"y" if ok else b"n")
        for t in held:
            t.close()
        del a
    sock.close()


# --- A ------------------------------------------------------------------------

def move(sock, mgr, kind, chunk, exportable, n, tag):
    """Seconds of one move of the chunk to B (A's clock)."""
    t0 = time.perf_counter()
    if kind == "bytes":
        header, frames = vkflow.dask.serialize_tensor(chunk)
        frame = frames[0]
        send_msg(sock, {"kind": kind, "n": n, "tag": tag, "header": header,
                        "nbytes": frame.nbytes})
        sock.sendall(frame)
        temp = None
    else:
        temp = None
        src = exportable
        if kind.startswith("in+"):
            temp = mgr.tensor(chunk.shape, dtype=chunk.dtype, memory="exportable")
            seq = mgr.sequence()
            seq.copy(chunk, temp).eval()
            seq.close()
            src = temp
        h = src.export_memory()
        send_msg(sock, {"kind": kind.replace("in+", ""), "n": n, "tag": tag})
        vkflow.send_handle(sock, h)
        os.close(h.fd)
    if recv_exact(sock, 1) != b"k":
        raise RuntimeError("dask_handle: B did not acknowledge")
    t1 = time.perf_counter()
    if temp is not None:
        # A's copy may go: B's import holds the memory (docs/INTEROP.md).
        temp.close()
    if recv_exact(sock, 1) != b"y":
        raise RuntimeError("dask_handle: B got wrong data (%s, %d elements)" % (kind, n))
    return t1 - t0


def run(opt):
    mgr = vkflow.default_device()
    ctx = multiprocessing.get_context("spawn")
    tmp = tempfile.mkdtemp(prefix="vkflow-dask-handle-")
    path = os.path.join(tmp, "sock")
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(path)
    lsock.listen(1)
    proc = ctx.Process(target=consumer, args=(path,))
    proc.start()
    sock, _ = lsock.accept()
    results = {}
    try:
        for mib in opt.mib:
            n = (mib << 20) // 4
            host = np.arange(n, dtype=np.float32)
            chunk = mgr.tensor(host)
            exportable = mgr.tensor((n,), memory="exportable")
            for r in range(opt.rounds + 1):
                tag = float(r + 7)
                host[0] = tag
                chunk.write(host)
                exportable.write(host)
                vkflow.synchronize(mgr)
                order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]
                secs = {k: move(sock, mgr, k, chunk, exportable, n, tag) for k in order}
                print("%d MiB round %d%s: %s" % (mib, r, " (warm-up)" if r == 0 else "",
                                                " ".join("%s %.4f s" % (k, secs[k])
                                                         for k in VARIANTS)), file=sys.stderr)
                if r:
                    for k, s in secs.items():
                        results.setdefault((mib, k), []).append(mib / s)
            chunk.close()
            exportable.close()
        send_msg(sock, None)
    finally:
        sock.close()
        lsock.close()
        proc.join(timeout=30)
        os.unlink(path)
        os.rmdir(tmp)
    if proc.exitcode != 0:
        raise RuntimeError("dask_handle: B exited with %s" % proc.exitcode)
    return results


def table(results, opt):
    med = {key: statistics.median(v) for key, v in results.items()}
    lines = ["| chunk | " + " | ".join("%s MiB/s" % k for k in VARIANTS) + " |",
             "|---|" + "---|" * len(VARIANTS)]
    for mib in opt.mib:
        cells = ["%.0f (%.0f-%.0f)" % (med[(mib, k)], min(results[(mib, k)]),
                                       max(results[(mib, k)])) for k in VARIANTS]
        lines.append("| %d MiB | %s |" % (mib, " | ".join(cells)))
    lines += ["", "| chunk | " + " | ".join("%s/bytes" % k for k in VARIANTS[1:]) + " |",
              "|---|" + "---|" * (len(VARIANTS) - 1)]
    for mib in opt.mib:
        lines.append("| %d MiB | %s |" % (mib, " | ".join(
            "%.2fx" % (med[(mib, k)] / med[(mib, "bytes")]) for k in VARIANTS[1:])))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-rounds", type=int, default=5)
    p.add_argument("-mib", default="1,16,128")
    opt = p.parse_args()
    opt.mib = [int(m) for m in opt.mib.split(",")]
    results = run(opt)
    print("A chunk of float32 moved between two processes on one device (Unix socket), "
          "median MiB/s of %d rounds (range), and the handle paths against the bytes "
          "(above 1x: faster).\n" % opt.rounds)
    print(table(results, opt))


if __name__ == "__main__":
    main()

"""PyTorch's host<->GPU copies of 64 MiB, the baseline of bench/hostpath.sh.

Prints Go benchmark lines (BenchmarkTorchHostPath/<dir>_<kind>) for reads
(GPU -> host) and writes (host -> GPU), into pinned memory (copy_ with a
synchronize: the bandwidth the issue's goal is against) and pageable
memory (.cpu() and .cuda() of an ordinary tensor). Prints nothing when
torch has no CUDA device (lavapipe machines): the table then has no torch
column.
"""
import sys
import time

SIZE = 64 << 20


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        return
    dev = torch.empty(SIZE, dtype=torch.uint8, device="cuda")
    pinned = torch.empty(SIZE, dtype=torch.uint8).pin_memory()
    pageable = torch.empty(SIZE, dtype=torch.uint8)
    cases = {
        "read_pinned": lambda: pinned.copy_(dev),
        "write_pinned": lambda: dev.copy_(pinned),
        "read_pageable": lambda: dev.cpu(),
        "write_pageable": lambda: pageable.cuda(),
    }
    for name, f in cases.items():
        for _ in range(3):
            f()
        torch.cuda.synchronize()
        times = []
        end = time.perf_counter() + seconds
        while time.perf_counter() < end or len(times) < 5:
            t0 = time.perf_counter()
            f()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        times.sort()
        ns = times[len(times) // 2] * 1e9
        print(f"BenchmarkTorchHostPath/{name}-1\t{len(times)}\t{ns:.0f} ns/op\t{SIZE / ns * 1e3:.2f} MB/s")


if __name__ == "__main__":
    main()

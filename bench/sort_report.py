"""Reads bench/sort.sh's raw output (Go benchmark lines of BenchmarkSort and
BenchmarkNumPy) and prints a Markdown table: the median over rounds of each
side's time per call (Go: med-ns/op, NumPy: ns/op, itself a median of
batches) and the ratio vkflow / NumPy (above 1: vkflow is slower).

Usage: sort_report.py < bench/out/sort_raw.txt
"""

import re
import statistics
import sys

LINE = re.compile(r"^Benchmark(Sort|NumPy)/(\S+?)-\d+\s+\d+\s+(.*)$")


def main():
    times = {}
    for line in sys.stdin:
        m = LINE.match(line.strip())
        if not m:
            continue
        side, name, rest = m.groups()
        metrics = dict((u, float(v)) for v, u in re.findall(r"([\d.e+]+) (\S+)", rest))
        ns = metrics.get("med-ns/op", metrics.get("ns/op"))
        times.setdefault((side, name), []).append(ns)
    med = {k: statistics.median(v) for k, v in times.items()}
    print("| workload | vkflow ms | NumPy stable ms | ratio | NumPy quicksort ms | ratio | rounds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    failed = False
    for name in ("sort_1m", "argsort_1m", "sort_1000x1024", "argsort_1000x1024"):
        vk = med.get(("Sort", name))
        st = med.get(("NumPy", name + "_stable"))
        qs = med.get(("NumPy", name + "_quicksort"))
        if vk is None or st is None or qs is None:
            print(f"| {name} | MISSING | | | | | |")
            failed = True
            continue
        print(f"| {name} | {vk / 1e6:.1f} | {st / 1e6:.1f} | {vk / st:.1f}x | {qs / 1e6:.1f} "
              f"| {vk / qs:.1f}x | {len(times[('Sort', name)])} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

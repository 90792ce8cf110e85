#!/usr/bin/env bash
# Host reads and writes of a 64 MiB Device tensor through each host path
# (BenchmarkHostPath in bench/hostpath_test.go: auto, mapped, staged through
# an import of the host's data, ring), and, where torch has a CUDA device,
# torch's pinned and pageable copies of the same size (bench/hostpath_torch.py)
# in the same run. Rounds interleave the two sides; the table gives each
# path's median GB/s, its ratio to the mapped path (staged against mapped
# reads: above 1 is faster), and, on a GPU, its ratio to torch's pinned copy
# in the same direction (the goal: at least 0.80).
#
# Knobs (environment): ROUNDS (default 3), GO_BENCHTIME (default 10x),
# TORCH_BENCHTIME (seconds per case, default 0.5).
# Output: the table on stdout and in bench/out/hostpath.md; raw lines in
# bench/out/hostpath_raw.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-3}
GO_BENCHTIME=${GO_BENCHTIME:-10x}
TORCH_BENCHTIME=${TORCH_BENCHTIME:-0.5}
GO=${GO:-go}
PYTHON=${PYTHON:-/usr/bin/python3}

out=bench/out
mkdir -p "$out"
raw=$out/hostpath_raw.txt
table=$out/hostpath.md
if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
unset VKFLOW_VALIDATION VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE VK_LAYER_ENABLES VKFLOW_HOST_READS VKFLOW_HOST_WRITES
export CGO_ENABLED=1

echo "bench: building the Go benchmarks" >&2
"$GO" test -c -o "$out/bench.test" ./bench
: >"$raw"
start=$SECONDS
for round in $(seq 1 "$ROUNDS"); do
	echo "bench: host paths round $round/$ROUNDS" >&2
	(cd bench && out/bench.test -test.run '^$' -test.bench '^BenchmarkHostPath$' -test.benchtime "$GO_BENCHTIME") >>"$raw"
	"$PYTHON" bench/hostpath_torch.py "$TORCH_BENCHTIME" >>"$raw" || echo "bench: torch baseline failed" >&2
done

"$PYTHON" - "$raw" >"$table" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(HostPath|TorchHostPath)/(\S+?)-\d+\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        side, name, ns = m.groups()
        runs.setdefault((side, name), []).append(float(ns))
gbs = {k: (64 << 20) / statistics.median(v) for k, v in runs.items()}  # bytes/ns = GB/s
torch = any(side == "TorchHostPath" for side, _ in gbs)
head = "| path | read GB/s | write GB/s | read / mapped | write / mapped |"
if torch:
    head += " read / torch pinned | write / torch pinned |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
for p in ("auto", "mapped", "staged", "ring"):
    r, w = gbs.get(("HostPath", "read_" + p)), gbs.get(("HostPath", "write_" + p))
    mr, mw = gbs.get(("HostPath", "read_mapped")), gbs.get(("HostPath", "write_mapped"))
    f = lambda a: "-" if a is None else "%.2f" % a
    x = lambda a, b: "-" if a is None or b is None else "%.2fx" % (a / b)
    row = f"| {p} | {f(r)} | {f(w)} | {x(r, mr)} | {x(w, mw)} |"
    if torch:
        row += f" {x(r, gbs.get(('TorchHostPath', 'read_pinned')))} | {x(w, gbs.get(('TorchHostPath', 'write_pinned')))} |"
    print(row)
if torch:
    for k in ("pinned", "pageable"):
        print(f"| torch {k} | {gbs[('TorchHostPath', 'read_' + k)]:.2f} | {gbs[('TorchHostPath', 'write_' + k)]:.2f} | | | | |")
PY
{
	printf "\nMedians over %s rounds; 64 MiB each way (ReadBytes/WriteBytes of a Go slice).\n" "$ROUNDS"
	printf "%ss; lavapipe threads: %s.\n" "$((SECONDS - start))" "LP_NUM_THREADS=${LP_NUM_THREADS:-unset (one per CPU: $(nproc))}"
} >>"$table"
cat "$table"

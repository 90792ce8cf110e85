#!/usr/bin/env bash
# The FFT benchmarks: vkflow's "fft" op (BenchmarkFFT in bench/fft_test.go:
# complex64 along the last axis, prepared once, one op.Run per iteration:
# submit + wait; the median Run) against NumPy's numpy.fft.fft and SciPy's
# scipy.fft.fft (bench/fft_numpy.py, /usr/bin/python3) on the same shapes,
# in the same run: one transform of 2^20 points, a [1024, 1024] batch, and
# a [256, 4093] batch (a prime length: Bluestein). Rounds interleave the two
# sides; the table gives each side's median over rounds and the ratios
# (vkflow time / NumPy time: below 1 is faster).
#
# Knobs (environment): ROUNDS (default 3), GO_BENCHTIME (default 2x),
# NUMPY_BENCHTIME (seconds per workload, default 0.5).
# Output: the table on stdout and in bench/out/fft.md; raw lines in
# bench/out/fft_raw.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-3}
GO_BENCHTIME=${GO_BENCHTIME:-2x}
NUMPY_BENCHTIME=${NUMPY_BENCHTIME:-0.5}
GO=${GO:-go}
PYTHON=${PYTHON:-/usr/bin/python3}

out=bench/out
mkdir -p "$out"
raw=$out/fft_raw.txt
table=$out/fft.md
if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
unset VKFLOW_VALIDATION VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE VK_LAYER_ENABLES
export CGO_ENABLED=1

echo "bench: building the Go benchmarks" >&2
"$GO" test -c -o "$out/bench.test" ./bench
: >"$raw"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$SECONDS
for round in $(seq 1 "$ROUNDS"); do
	echo "bench: fft round $round/$ROUNDS" >&2
	(cd bench && out/bench.test -test.run '^$' -test.bench '^BenchmarkFFT$' -test.benchtime "$GO_BENCHTIME") >>"$raw"
	"$PYTHON" bench/fft_numpy.py "$NUMPY_BENCHTIME" >>"$raw"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

"$PYTHON" - "$raw" >"$table" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(FFT|NumPyFFT)/(\S+?)-\d+\s+\d+\s+([\d.]+) ns/op(.*)", line)
    if not m:
        continue
    side, name, ns, rest = m.groups()
    med = re.search(r"([\d.]+) med-ns/op", rest)
    ns = float(med.group(1)) if med else float(ns)
    if side == "FFT":
        runs.setdefault((name, "vkflow"), []).append(ns)
    else:
        w, impl = name.rsplit("_", 1)
        runs.setdefault((w, impl), []).append(ns)
print("| workload | vkflow ms | NumPy ms | SciPy ms | vkflow/NumPy | vkflow/SciPy |")
print("|---|---|---|---|---|---|")
for w in ("fft_1m", "fft_1024x1024", "fft_256x4093"):
    med = {impl: statistics.median(runs[(w, impl)]) / 1e6 for impl in ("vkflow", "numpy", "scipy") if (w, impl) in runs}
    v, n, s = med.get("vkflow"), med.get("numpy"), med.get("scipy")
    f = lambda a: "-" if a is None else "%.2f" % a
    r = lambda a, b: "-" if a is None or b is None else "%.2fx" % (a / b)
    print(f"| {w} | {f(v)} | {f(n)} | {f(s)} | {r(v, n)} | {r(v, s)} |")
PY
{
	printf "\nMedians over %s rounds (vkflow: the median op.Run of each round; NumPy/SciPy: the median batch).\n" "$ROUNDS"
	printf "lavapipe threads: %s. %ss; load average before: %s, after: %s.\n" \
		"LP_NUM_THREADS=${LP_NUM_THREADS:-unset (one per CPU: $(nproc))}" "$((SECONDS - start))" "$load_before" "$load_after"
} >>"$table"
cat "$table"

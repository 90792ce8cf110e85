#!/usr/bin/env bash
# The sort benchmarks: ops "sort" and "argsort" (bench/sort_test.go,
# BenchmarkSort) against NumPy's np.sort and np.argsort (bench/sort_numpy.py:
# kind="stable", which is what vkflow's sort is, and NumPy's default
# quicksort) in the same run, on 1Mi float32 values and on a [1000, 1024]
# float32 batch along the last axis. Rounds alternate the two sides, so
# both sides of a ratio share the machine's load; bench/sort_report.py
# prints the medians and the ratios vkflow / NumPy (also written to
# bench/out/sort.md). Raw output: bench/out/sort_raw.txt.
#
# Knobs (environment): ROUNDS (default 3), GO_BENCHTIME (default 1s),
# NUMPY_BENCHTIME (seconds, default 1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-3}
GO_BENCHTIME=${GO_BENCHTIME:-1s}
NUMPY_BENCHTIME=${NUMPY_BENCHTIME:-1}
GO=${GO:-go}
PYTHON=${PYTHON:-/usr/bin/python3}

out=bench/out
mkdir -p "$out"
raw=$out/sort_raw.txt
table=$out/sort.md

if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
unset VKFLOW_VALIDATION VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE VK_LAYER_ENABLES
export CGO_ENABLED=1

echo "bench: building the Go benchmarks" >&2
"$GO" test -c -o "$out/bench.test" ./bench

: >"$raw"
failed=0
start=$SECONDS
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$ROUNDS"); do
	echo "bench: sort round $round/$ROUNDS" >&2
	if ! (cd bench && out/bench.test -test.run '^$' -test.bench '^BenchmarkSort$' \
		-test.benchtime "$GO_BENCHTIME") >>"$raw"; then
		echo "bench: BenchmarkSort failed (bench/out/sort_raw.txt)" >&2
		failed=1
	fi
	"$PYTHON" bench/sort_numpy.py "$NUMPY_BENCHTIME" >>"$raw" || failed=1
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

"$PYTHON" bench/sort_report.py <"$raw" >"$table" || failed=1
{
	printf "\nlavapipe threads: %s.\n" "LP_NUM_THREADS=${LP_NUM_THREADS:-unset (one per CPU: $(nproc))}"
	printf "%s rounds in %ss; load average (1, 5, 15 min) before: %s, after: %s.\n" \
		"$ROUNDS" "$((SECONDS - start))" "$load_before" "$load_after"
} >>"$table"
cat "$table"
exit "$failed"

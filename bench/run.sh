#!/usr/bin/env bash
# Benchmarks vkflow against the raw C Vulkan baseline and prints the
# comparison table (also written to bench/out/table.md). See
# docs/BENCHMARKS.md.
#
# C and Go runs are interleaved, round by round, so that both sides share the
# machine's noise. Each round runs the C baseline once (every workload:
# -benchtime C_BENCHTIME seconds, reported as the median of 5 batches) and
# the Go benchmarks GO_COUNT times at GO_BENCHTIME each (5 x 200ms by
# default: the same time per workload as the C side, and, like its 5
# batches, a median rather than a mean once the report takes the median of
# all runs). Raw output: bench/out/raw.txt; the baseline's stderr (device,
# verification, per-batch spread): bench/out/baseline.log.
#
# The chain workloads (chain1000, chain1000_eval, and chain1000_cmdbuf with
# the Go chains replayed from one command buffer) report ns/op per chain of
# 1000 dispatches and an ns/dispatch metric, which the report compares.
# The graphs (bench/graph_test.go: graph_chain1000, graph_wide8_1q/2q,
# graph_diamond8_1q/2q) are part of BenchmarkGo; the report compares the
# 2-queue graphs with their 1-queue forms as well (Go against Go, same run).
# Graph compile time (BenchmarkCompile, graph/) runs from make bench, after
# this script.
#
# Each round then runs the pinned pass: the single-submit workloads
# (PINNED_WORKLOADS, default dispatch1024 and empty_submit) with C and Go
# pinned to one core (taskset -c PIN_CPU, and GOMAXPROCS=1 for Go, so that
# the Go runtime has one P, as the C program has one thread of its own),
# C then Go, the same benchtime and counts. Their lines are renamed
# pinned_<workload>; the report gives them a table and a goal of their own.
# lavapipe's threads inherit the pinning: everything shares the one core.
#
# Knobs (environment): ROUNDS (default 5), C_BENCHTIME (seconds, default 1),
# GO_BENCHTIME (default 200ms), GO_COUNT (default 5), PINNED (1; 0 skips the
# pinned pass), PIN_CPU (default 1, or 0 on a 1-CPU machine),
# PINNED_WORKLOADS. With the defaults a run takes about 4 minutes on a
# 2-core machine (ROUNDS=3: about 2.5; more when the machine is busy). To
# pin everything to one core, as the chains like: taskset -c 1 bench/run.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-5}
C_BENCHTIME=${C_BENCHTIME:-1}
GO_BENCHTIME=${GO_BENCHTIME:-200ms}
GO_COUNT=${GO_COUNT:-5}
GO=${GO:-go}
CC=${CC:-cc}
PINNED=${PINNED:-1}
if [[ -z "${PIN_CPU:-}" ]]; then
	PIN_CPU=1
	if (($(nproc) < 2)); then
		PIN_CPU=0
	fi
fi
PINNED_WORKLOADS=${PINNED_WORKLOADS:-dispatch1024 empty_submit}

out=bench/out
mkdir -p "$out"
raw=$out/raw.txt
log=$out/baseline.log
table=$out/table.md

if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
# Benchmarks run without the validation layer, on both sides.
unset VKFLOW_VALIDATION VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE VK_LAYER_ENABLES
export CGO_ENABLED=1

echo "bench: building the C baseline and the Go benchmarks" >&2
"$CC" -O2 -std=c11 -Wall -Wextra -o "$out/baseline" bench/baseline/baseline.c -lvulkan -lm
# Compile (and run no test) now, so that no round pays for a build.
"$GO" test -count=1 -run '^$' ./bench >/dev/null
"$GO" build -o "$out/report" ./bench/report
if [[ "$PINNED" != 0 ]]; then
	command -v taskset >/dev/null || {
		echo "bench: taskset not found (util-linux); set PINNED=0" >&2
		exit 1
	}
	# The pinned pass runs the test binary itself: go test would pin and
	# limit the go command too.
	"$GO" test -c -o "$out/bench.test" ./bench
	pinned_re="^BenchmarkGo/($(tr ' ' '|' <<<"$PINNED_WORKLOADS"))\$"
fi

# pinned renames the workloads of its input pinned_<workload>.
pinned() { sed -E 's#^Benchmark(C|Go)/#Benchmark\1/pinned_#'; }

: >"$raw"
: >"$log"
start=$SECONDS
for round in $(seq 1 "$ROUNDS"); do
	echo "round: $round" >>"$raw" # bench/report pairs C and vkflow by round
	echo "bench: round $round/$ROUNDS: C baseline" >&2
	"$out/baseline" shaders -benchtime "$C_BENCHTIME" >>"$raw" 2>>"$log"
	echo "bench: round $round/$ROUNDS: vkflow" >&2
	"$GO" test ./bench -run '^$' -bench '^BenchmarkGo$' -benchtime "$GO_BENCHTIME" -count "$GO_COUNT" >>"$raw"
	if [[ "$PINNED" != 0 ]]; then
		echo "bench: round $round/$ROUNDS: pinned to CPU $PIN_CPU: C baseline, then vkflow (GOMAXPROCS=1)" >&2
		for w in $PINNED_WORKLOADS; do
			taskset -c "$PIN_CPU" "$out/baseline" shaders -benchtime "$C_BENCHTIME" -run "$w" 2>>"$log" |
				grep -E "^BenchmarkC/$w-" | pinned >>"$raw"
		done
		(cd bench && GOMAXPROCS=1 taskset -c "$PIN_CPU" "../$out/bench.test" -test.run '^$' \
			-test.bench "$pinned_re" -test.benchtime "$GO_BENCHTIME" -test.count "$GO_COUNT") | pinned >>"$raw"
	fi
done
echo "bench: $ROUNDS rounds in $((SECONDS - start))s" >&2

"$out/report" -device-log "$log" <"$raw" >"$table"
cat "$table"

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
# Knobs (environment): ROUNDS (default 5), C_BENCHTIME (seconds, default 1),
# GO_BENCHTIME (default 200ms), GO_COUNT (default 5). With the defaults a
# run takes about 4.5 minutes on a 2-core machine (ROUNDS=3: about 3; more
# when the machine is busy). To pin everything to one core, as the chains
# like: taskset -c 1 bench/run.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-5}
C_BENCHTIME=${C_BENCHTIME:-1}
GO_BENCHTIME=${GO_BENCHTIME:-200ms}
GO_COUNT=${GO_COUNT:-5}
GO=${GO:-go}
CC=${CC:-cc}

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

: >"$raw"
: >"$log"
start=$SECONDS
for round in $(seq 1 "$ROUNDS"); do
	echo "bench: round $round/$ROUNDS: C baseline" >&2
	"$out/baseline" shaders -benchtime "$C_BENCHTIME" >>"$raw" 2>>"$log"
	echo "bench: round $round/$ROUNDS: vkflow" >&2
	"$GO" test ./bench -run '^$' -bench '^BenchmarkGo$' -benchtime "$GO_BENCHTIME" -count "$GO_COUNT" >>"$raw"
done
echo "bench: $ROUNDS rounds in $((SECONDS - start))s" >&2

"$out/report" -device-log "$log" <"$raw" >"$table"
cat "$table"

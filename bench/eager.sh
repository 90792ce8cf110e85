#!/usr/bin/env bash
# The eager op benchmarks: vkflow's op streams called one op at a time, from
# Python and from the C API, against the raw C Vulkan baseline
# (bench/baseline/baseline.c) in the same run. Prints the table (also
# written to bench/out/eager.md). See docs/BENCHMARKS.md, "Eager ops".
#
#   sync   Python (bench/eager_py.py, /usr/bin/python3 with the source
#          tree's python/vkflow): `c = vkflow.ops.add(a, b)` on 1,000
#          float32, then `float(c.read()[0])`, per iteration; and the same from C
#          (bench/eager/eager.c: vkflow_op_call_async into a new output,
#          vkflow_tensor_read, vkflow_tensor_close); against baseline.c's
#          dispatch1024 (a 1024-element multiply recorded once, submit +
#          wait), ns/op. Goal (Python): <= 1.3x (issue 23; was 1.5x).
#          vkflow's host waits poll the timeline for up to 200 µs before
#          they sleep (WithWaitSpin, VKFLOW_WAIT_SPIN); dispatch1024 sleeps
#          in vkWaitSemaphores at once. So the sync loops are also run with
#          VKFLOW_WAIT_SPIN=0 (names ending in _nospin: both sides sleep)
#          and compared with baseline.c's dispatch_poll1024 (the same
#          dispatch, waited for by polling as vkflow does: both sides poll).
#          Goals against dispatch_poll1024 (issue 32, cached ops submit a
#          kept recording): Python <= 1.2x, C API <= 1.1x. The three-way
#          comparison (both poll / both sleep / default) is kept.
#   chain  1,000 dependent adds, `x = vkflow.ops.add(x, y)` with a new
#          output each time, then one read, per op; from Python and from C
#          (vkflow_op_call_async, one vkflow_tensor_read at the end); against
#          baseline.c's chain1000 (1000 dependent dispatches, one submit per
#          dispatch ordered by a timeline, one host wait), ns/dispatch.
#          Goal (Python): <= 1.3x.
#   cache  the eager counters (vkflow.ops.cache_stats,
#          vkflow_op_cache_stats) around each timed loop: the prepared-op
#          cache must hit on every call after warm-up (100%), and no call
#          may wait on the host (0 host waits per op).
#
# Every side times as baseline.c does: 3 warm-up iterations, a calibration,
# then 5 batches of a fifth of the bench time each; the median batch counts.
# Rounds interleave the sides, comparison by comparison, so that both sides
# of a ratio run seconds apart and share the machine's noise (even rounds
# run vkflow first, odd rounds the baseline first); bench/eager_report.py
# takes the medians over the rounds and the per-round ratios' range.
#
# Everything is built into bench/out/ (git ignores it): the C baseline as
# bench/run.sh builds it, libvkflow.so with go build -buildmode=c-shared
# into bench/out/eager/ (not build/, which make capi and the tests use), and
# eager.c against that library. No validation layer.
#
# Knobs (environment): ROUNDS (default 9: the per-round ratios of the
# synchronous loops spread by ±0.2 on the shared 2-core machine, and the
# goals' margins are smaller, so the medians need the rounds), C_BENCHTIME
# (seconds per baseline workload, default 1), EAGER_BENCHTIME (seconds per
# workload for Python and the C API program, default 1), PYTHON (default
# /usr/bin/python3), GO, CC. baseline.c's -run chain1000 runs
# chain1000_cmdbuf too (its filter is a substring); the report leaves it
# out. With the defaults a run takes about 125 s on the 2-core lavapipe
# machine (the rounds about 120 s; a go build of the library with a cold
# cache adds up to a minute). Raw output:
# bench/out/eager_raw.txt; the sides' stderr (device, verification,
# per-batch spread): bench/out/eager.log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-9}
C_BENCHTIME=${C_BENCHTIME:-1}
EAGER_BENCHTIME=${EAGER_BENCHTIME:-1}
PYTHON=${PYTHON:-/usr/bin/python3}
GO=${GO:-go}
CC=${CC:-cc}

out=bench/out
lib=$PWD/$out/eager
mkdir -p "$lib"
raw=$out/eager_raw.txt
log=$out/eager.log
table=$out/eager.md

if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
# Benchmarks run without the validation layer, on every side, and with
# vkflow's default host wait (the sides with VKFLOW_WAIT_SPIN=0 set it).
unset VKFLOW_VALIDATION VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE VK_LAYER_ENABLES VKFLOW_WAIT_SPIN
export CGO_ENABLED=1

echo "bench: eager: building the C baseline, libvkflow.so and bench/eager/eager.c" >&2
"$CC" -O2 -std=c11 -Wall -Wextra -o "$out/baseline" bench/baseline/baseline.c -lvulkan -lm
"$GO" build -buildmode=c-shared -o "$lib/libvkflow.so" ./capi
"$CC" -O2 -std=c11 -Wall -Wextra -I capi -I dlpack -o "$lib/eager" bench/eager/eager.c \
	-L "$lib" -lvkflow -Wl,-rpath,"$lib" -lm

: >"$raw"
: >"$log"
failed=0

base_side() { # baseline.c workload (substring)
	"$out/baseline" shaders -benchtime "$C_BENCHTIME" -run "$1" >>"$raw" 2>>"$log" || {
		echo "bench: eager: baseline -run $1 failed (bench/out/eager.log)" >&2
		failed=1
	}
}
py_side() { # eager_py.py workload
	PYTHONPATH="$PWD/python" VKFLOW_LIB="$lib/libvkflow.so" "$PYTHON" bench/eager_py.py \
		-benchtime "$EAGER_BENCHTIME" -run "$1" >>"$raw" 2>>"$log" || {
		echo "bench: eager: eager_py.py -run $1 failed (bench/out/eager.log)" >&2
		failed=1
	}
}
c_side() { # eager.c workload
	"$lib/eager" -benchtime "$EAGER_BENCHTIME" -run "$1" >>"$raw" 2>>"$log" || {
		echo "bench: eager: eager -run $1 failed (bench/out/eager.log)" >&2
		failed=1
	}
}
comparison() { # round, baseline workload, eager workload[, nospin: also VKFLOW_WAIT_SPIN=0]
	if (($1 % 2)); then
		base_side "$2"
		py_side "$3"
		c_side "$3"
		if [[ ${4:-} == nospin ]]; then
			VKFLOW_WAIT_SPIN=0 py_side "$3"
			VKFLOW_WAIT_SPIN=0 c_side "$3"
		fi
	else
		if [[ ${4:-} == nospin ]]; then
			VKFLOW_WAIT_SPIN=0 c_side "$3"
			VKFLOW_WAIT_SPIN=0 py_side "$3"
		fi
		c_side "$3"
		py_side "$3"
		base_side "$2"
	fi
}

start=$SECONDS
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$ROUNDS"); do
	echo "bench: eager round $round/$ROUNDS" >&2
	echo "# round $round" >>"$raw"
	# "dispatch" selects dispatch1024 and dispatch_poll1024.
	comparison "$round" dispatch add1000_sync nospin
	comparison "$round" chain1000 add_chain1000
done
echo "bench: eager: $ROUNDS rounds in $((SECONDS - start))s" >&2
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

"$PYTHON" bench/eager_report.py "$raw" "$log" >"$table" || failed=1
{
	printf "\nlavapipe threads: %s. Bench time per workload: baseline %ss, eager %ss.\n" \
		"LP_NUM_THREADS=${LP_NUM_THREADS:-unset (one per CPU: $(nproc))}" "$C_BENCHTIME" "$EAGER_BENCHTIME"
	printf "%s rounds in %ss; load average (1, 5, 15 min) before: %s, after: %s.\n" \
		"$ROUNDS" "$((SECONDS - start))" "$load_before" "$load_after"
} >>"$table"
cat "$table"
exit "$failed"

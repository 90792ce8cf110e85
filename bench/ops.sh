#!/usr/bin/env bash
# The operator benchmarks of issue 11: vkflow's ops against a raw C Vulkan
# program and NumPy, in the same run. Prints the table (also written to
# bench/out/ops.md). See docs/BENCHMARKS.md, "Operators (issue 11)".
#
#   add     BenchmarkOps/add_1m, add_16m (ops "add", float32, preallocated
#           output, prepared once, one op.Run per iteration: submit + wait)
#           against bench/baseline/ops.c's add_1m, add_16m (the vec4 add
#           kernel shaders/add_vec4.spv, local size 256, a command buffer
#           recorded once, submit + wait). Goal: >= 0.9x the C GB/s.
#           Also add_1m_ckernel, add_16m_ckernel: C's own shader run through
#           ops.Register + op.Run, which separates the Op machinery's cost
#           from the generated kernel's.
#   sum     BenchmarkOps/sum_16m (ops "sum" over all axes of 16Mi floats;
#           GB/s counts the input read) against ops.c's copy_16m (a vec4
#           copy kernel, bench/testdata/copy_vec4.comp; GB/s counts read +
#           write). Goal: >= 0.8x.
#   matmul  BenchmarkOps/matmul_1024 (1024x1024 float32, GFLOP/s = 2n^3/t)
#           against NumPy (bench/ops_numpy.py, /usr/bin/python3) with
#           OpenBLAS's default threads and with OPENBLAS_NUM_THREADS=1.
#           Reported, no goal. lavapipe runs its shaders on its own threads
#           (LP_NUM_THREADS, default: one per CPU).
#
# Debian's NumPy uses whatever libblas.so.3 the alternatives system points
# at (the reference BLAS unless an OpenBLAS package is installed). The
# script loads OpenBLAS for NumPy from OPENBLAS_DIR (default: Debian's
# libopenblas0-pthread directory, which make deps installs) when it exists;
# the table names the BLAS library NumPy really loaded and its threads.
#
# Rounds interleave C, vkflow and NumPy, comparison by comparison, so that
# both sides of a ratio share the machine's noise; the report takes medians.
# The Go side runs from a test binary built once (bench/out/bench.test).
# Knobs (environment): ROUNDS (default 5), C_BENCHTIME (seconds per C
# workload, default 0.5: the median of 5 batches), GO_BENCHTIME (default
# 300ms), GO_COUNT (Go runs per round, default 1), NUMPY_BENCHTIME
# (seconds, default 0.5), MATMUL_ROUNDS (the matmul comparison runs in the
# first MATMUL_ROUNDS rounds only, default 3: a lavapipe matmul takes
# 0.2 to 0.6 s). With the defaults a run takes about 70 s on the 2-core
# machine at load average 2 to 3, and several minutes when it is busy.
# Raw output: bench/out/ops_raw.txt; the C side's stderr:
# bench/out/ops_baseline.log.
#
# An op not registered yet is skipped by its benchmark and shown as
# MISSING; a benchmark that fails is shown as missing too, and the script
# then exits 1 after printing the table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-5}
C_BENCHTIME=${C_BENCHTIME:-0.5}
GO_BENCHTIME=${GO_BENCHTIME:-300ms}
GO_COUNT=${GO_COUNT:-1}
NUMPY_BENCHTIME=${NUMPY_BENCHTIME:-0.5}
MATMUL_ROUNDS=${MATMUL_ROUNDS:-3}
OPENBLAS_DIR=${OPENBLAS_DIR:-/usr/lib/x86_64-linux-gnu/openblas-pthread}
GO=${GO:-go}
CC=${CC:-cc}
PYTHON=${PYTHON:-/usr/bin/python3}

out=bench/out
mkdir -p "$out"
raw=$out/ops_raw.txt
log=$out/ops_baseline.log
table=$out/ops.md

if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
# Benchmarks run without the validation layer, on both sides.
unset VKFLOW_VALIDATION VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE VK_LAYER_ENABLES
export CGO_ENABLED=1

numpy_env=()
if [[ -d $OPENBLAS_DIR ]]; then
	numpy_env=(env "LD_LIBRARY_PATH=$OPENBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
else
	echo "bench: $OPENBLAS_DIR not found: NumPy uses the system's libblas.so.3" >&2
fi

echo "bench: building the C operator baseline and the Go benchmarks" >&2
"$CC" -O2 -std=c11 -Wall -Wextra -o "$out/ops" bench/baseline/ops.c -lvulkan -lm
"$GO" test -c -o "$out/bench.test" ./bench
"$GO" build -o "$out/opsreport" ./bench/opsreport

: >"$raw"
: >"$log"
failed=0

c_side() { # C workload
	"$out/ops" shaders/add_vec4.spv bench/testdata/copy_vec4.spv -benchtime "$C_BENCHTIME" -run "$1" >>"$raw" 2>>"$log"
}
go_side() { # Go workloads (sub-benchmark regexp of BenchmarkOps)
	# The test binary runs in the package directory, as go test does.
	if ! (cd bench && out/bench.test -test.run '^$' -test.bench "^BenchmarkOps\$/^($1)\$" \
		-test.benchtime "$GO_BENCHTIME" -test.count "$GO_COUNT") >>"$raw"; then
		echo "bench: BenchmarkOps/($1) failed (bench/out/ops_raw.txt)" >&2
		failed=1
	fi
}
numpy_side() { # label [environment]
	local label=$1
	shift
	"${numpy_env[@]}" env "$@" "$PYTHON" bench/ops_numpy.py "$label" "$NUMPY_BENCHTIME" >>"$raw" || failed=1
}

# Each round runs every comparison's sides back to back, so that the two
# sides of a ratio are seconds apart and share the machine's load.
start=$SECONDS
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$ROUNDS"); do
	echo "bench: ops round $round/$ROUNDS" >&2
	c_side add_1m
	go_side 'add_1m|add_1m_ckernel'
	c_side add_16m
	go_side 'add_16m|add_16m_ckernel'
	c_side copy_16m
	go_side sum_16m
	if ((round <= MATMUL_ROUNDS)); then
		go_side matmul_1024
		numpy_side default
		numpy_side 1thread OPENBLAS_NUM_THREADS=1
	fi
done
echo "bench: ops: $ROUNDS rounds in $((SECONDS - start))s" >&2
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

"$out/opsreport" -device-log "$log" <"$raw" >"$table"
{
	printf "\nlavapipe threads: %s.\n" "LP_NUM_THREADS=${LP_NUM_THREADS:-unset (one per CPU: $(nproc))}"
	printf "%s rounds in %ss; load average (1, 5, 15 min) before: %s, after: %s.\n" \
		"$ROUNDS" "$((SECONDS - start))" "$load_before" "$load_after"
} >>"$table"
cat "$table"
exit "$failed"

#!/usr/bin/env bash
# The Dask benchmarks (bench/dask_bench.py): on one 2-worker LocalCluster
# (127.0.0.1, one thread per worker, vkflow.dask preloaded), round by round:
#   - examples/dask/kmeans.py's k-means (200,000 x 16 float32 in 8 chunks,
#     k=8, 5 Lloyd iterations, data generated on the workers), vkflow chunks
#     against NumPy chunks, and vkflow chunks on 1 worker against 2;
#   - a 16 MiB chunk made on worker A and fetched by a task on worker B:
#     a vkflow tensor (vkflow.dask's serializers) against a NumPy array
#     (Dask's own), timed by B's transfer log;
#   - the same chunk serialized and deserialized in one process, vkflow.dask
#     against pickle;
#   - (bench/dask_handle.py) a 1, 16 and 128 MiB chunk moved between two
#     processes over a Unix socket: vkflow.dask's bytes against an
#     exported-memory handle (alias, and with device copies on either side),
#     appended to the table (per-round figures in bench/out/dask_handle.log).
# Every k-means result is checked against NumPy's. Medians of ROUNDS rounds
# (default 3; transfers: 3 per round), ranges and ratios, as a markdown table
# (also written to bench/out/dask.md; per-round figures in bench/out/dask.log).
# About 40 s on the 2-core lavapipe machine. See docs/DISTRIBUTED.md.
#
# Knobs (environment): ROUNDS, HANDLE_ROUNDS (default 5), SIZE (points,
# default 200000), MIB (chunk moved, default 16), PYTHON (default
# /usr/bin/python3, with Debian's dask and distributed), GO. libvkflow.so is
# built into bench/out/dask/ (not build/); no validation layer.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-200000}
MIB=${MIB:-16}
HANDLE_ROUNDS=${HANDLE_ROUNDS:-5}
PYTHON=${PYTHON:-/usr/bin/python3}
GO=${GO:-go}

out=bench/out
lib=$PWD/$out/dask
mkdir -p "$lib"
if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
unset VKFLOW_VALIDATION VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE VK_LAYER_ENABLES
export CGO_ENABLED=1

if ! "$PYTHON" -c 'import distributed' 2>/dev/null; then
	echo "bench: dask: $PYTHON has no dask.distributed; skipped" >&2
	exit 0
fi
echo "bench: dask: building libvkflow.so" >&2
"$GO" build -buildmode=c-shared -o "$lib/libvkflow.so" ./capi

start=$SECONDS
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
PYTHONPATH="$PWD/python" VKFLOW_LIB="$lib/libvkflow.so" "$PYTHON" bench/dask_bench.py \
	-rounds "$ROUNDS" -size "$SIZE" -mib "$MIB" >"$out/dask.md" 2>"$out/dask.log" || {
	echo "bench: dask: dask_bench.py failed (bench/out/dask.log):" >&2
	tail -20 "$out/dask.log" >&2
	exit 1
}
PYTHONPATH="$PWD/python" VKFLOW_LIB="$lib/libvkflow.so" "$PYTHON" bench/dask_handle.py \
	-rounds "$HANDLE_ROUNDS" >"$out/dask_handle.md" 2>"$out/dask_handle.log" || {
	echo "bench: dask: dask_handle.py failed (bench/out/dask_handle.log):" >&2
	tail -20 "$out/dask_handle.log" >&2
	exit 1
}
{
	printf "\n" && cat "$out/dask_handle.md"
} >>"$out/dask.md"
{
	printf "\n%s rounds in %ss on %s (%s CPUs; lavapipe threads: %s); load average before: %s, after: %s.\n" \
		"$ROUNDS" "$((SECONDS - start))" "$(date -u +%Y-%m-%d)" "$(nproc)" \
		"${LP_NUM_THREADS:-one per CPU}" "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$out/dask.md"
cat "$out/dask.md"

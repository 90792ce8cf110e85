#!/usr/bin/env bash
# The cross-process hand-off benchmark (bench/interop; docs/BENCHMARKS.md,
# "Interop"): 256 MiB exported by this process, sent over a Unix socket,
# imported by a child process and read there by a kernel, against a memcpy
# of 256 MiB in the same run. Prints the table (also written to
# bench/out/interop.md).
#
# Knobs (environment): INTEROP_MIB (default 256), ROUNDS (default 5),
# INTEROP_ITERS (iterations of each side per round, default 5). With the
# defaults a run takes about half a minute on the 2-core lavapipe machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-5}
INTEROP_MIB=${INTEROP_MIB:-256}
INTEROP_ITERS=${INTEROP_ITERS:-5}
GO=${GO:-go}

out=bench/out
mkdir -p "$out"
if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
# Benchmarks run without the validation layer.
unset VKFLOW_VALIDATION VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE VK_LAYER_ENABLES
export CGO_ENABLED=1

echo "bench: building bench/interop" >&2
"$GO" build -o "$out/interop" ./bench/interop
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$SECONDS
"$out/interop" -mib "$INTEROP_MIB" -rounds "$ROUNDS" -iters "$INTEROP_ITERS" >"$out/interop.md"
printf "\n%s rounds in %ss; load average (1, 5, 15 min) before: %s, after: %s.\n" \
	"$ROUNDS" "$((SECONDS - start))" "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/interop.md"
cat "$out/interop.md"

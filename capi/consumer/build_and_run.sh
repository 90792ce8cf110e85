#!/usr/bin/env bash
# Compiles capi/consumer/consumer.c, ops.c, eager.c and wire.c (a C DLPack consumer built against
# Debian's DLPack 0.6 header, libdlpack-dev) against libvkflow.so and runs it.
# Usage: capi/consumer/build_and_run.sh [directory holding libvkflow.so]
# The directory defaults to the repository's build/ (made by `make capi`).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
libdir=${1:-$root/build}
libdir=$(cd "$libdir" && pwd)

if [[ ! -f $libdir/libvkflow.so ]]; then
	echo "build_and_run.sh: no libvkflow.so in $libdir (run make capi)" >&2
	exit 1
fi
if [[ ! -f /usr/include/dlpack/dlpack.h ]]; then
	echo "build_and_run.sh: /usr/include/dlpack/dlpack.h missing (apt-get install libdlpack-dev)" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vkflow-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

gcc -std=c11 -O1 -g -Wall -Wextra -Werror \
	-I "$root/capi" -I "$root/dlpack" \
	"$here/consumer.c" "$here/ops.c" "$here/eager.c" "$here/wire.c" -o "$tmp/consumer" \
	-L "$libdir" -lvkflow -lm -Wl,-rpath,"$libdir"

# The Vulkan loader complains on every start without XDG_RUNTIME_DIR.
if [[ -z ${XDG_RUNTIME_DIR:-} ]]; then
	export XDG_RUNTIME_DIR="$tmp/xdg"
	mkdir -p -m 700 "$XDG_RUNTIME_DIR"
fi
"$tmp/consumer"

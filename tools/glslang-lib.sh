#!/usr/bin/env bash
# Builds libglslang-vkflow.so in the user's cache folder
# (${XDG_CACHE_HOME:-~/.cache}/vkflow/, Go's os.UserCacheDir): glslang and SPIRV-Tools, linked from
# the static archives of Debian's glslang-dev and spirv-tools (installed
# with libshaderc-dev) into one shared library.
#
# Debian 12's libshaderc.so.1 leaves the glslang and SPIRV-Tools symbols
# undefined (only the glslc program carries them), so it cannot be opened
# on its own. Package glsl opens this library (or the one named by
# VKFLOW_GLSLANG) with RTLD_GLOBAL before libshaderc.so.1, which then
# compiles in process (5 ms a small shader, against 250-900 ms for running
# glslc), in Go programs, the C API and Python alike. Without it, glsl runs
# glslc instead.
#
# Idempotent: rebuilds only when an archive is newer than the library.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
L=/usr/lib/x86_64-linux-gnu
out=${XDG_CACHE_HOME:-$HOME/.cache}/vkflow/libglslang-vkflow.so
archives=("$L/libglslang.a" "$L/libMachineIndependent.a" "$L/libGenericCodeGen.a" "$L/libOSDependent.a"
	"$L/libOGLCompiler.a" "$L/libSPIRV.a" "$L/libglslang-default-resource-limits.a"
	"$L/libSPIRV-Tools-opt.a" "$L/libSPIRV-Tools.a")
for a in "${archives[@]}"; do
	if [[ ! -f $a ]]; then
		echo "glslang-lib: $a is missing (Debian: glslang-dev, spirv-tools); package glsl will run glslc" >&2
		exit 0
	fi
done
fresh=1
[[ -f $out ]] || fresh=0
for a in "${archives[@]}"; do
	[[ $a -nt $out ]] && fresh=0
done
if ((fresh)); then
	exit 0
fi
mkdir -p "$(dirname "$out")"
${CXX:-g++} -shared -o "$out.tmp" -Wl,--whole-archive "${archives[@]}" -Wl,--no-whole-archive -lpthread
mv "$out.tmp" "$out"
echo "glslang-lib: built $out"

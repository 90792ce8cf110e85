#!/usr/bin/env bash
# Compiles the GLSL compute shaders in shaders/ to SPIR-V.
#
#   tools/glslc.sh           compile every shaders/X.comp to shaders/X.spv
#   tools/glslc.sh --check   compile into a temporary folder and compare the
#                            result byte for byte with the committed .spv files
#
# The flags are fixed so that the output is deterministic and carries no debug
# information: the committed .spv files must be reproducible by anyone with
# the same glslc.
set -euo pipefail

usage() {
	echo "usage: $0 [--check]" >&2
	exit 2
}

check=0
case $# in
0) ;;
1)
	if [[ $1 == --check ]]; then
		check=1
	else
		usage
	fi
	;;
*) usage ;;
esac

# Work from the repository root, whatever the caller's directory.
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v glslc >/dev/null 2>&1; then
	echo "shaders: glslc not found in PATH; install shaderc (Debian/Ubuntu: apt-get install glslc)" >&2
	exit 1
fi

GLSLC_FLAGS=(--target-env=vulkan1.2 -O)

shopt -s nullglob
sources=(shaders/*.comp)
shopt -u nullglob
if ((${#sources[@]} == 0)); then
	echo "shaders: no shaders/*.comp files found" >&2
	exit 1
fi

if ((check == 0)); then
	for src in "${sources[@]}"; do
		out="${src%.comp}.spv"
		glslc "${GLSLC_FLAGS[@]}" -o "$out" "$src"
	done
	echo "shaders: compiled ${#sources[@]} SPIR-V files"
	exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

stale=0
for src in "${sources[@]}"; do
	name="$(basename "${src%.comp}").spv"
	glslc "${GLSLC_FLAGS[@]}" -o "$tmp/$name" "$src"
	if [[ ! -f shaders/$name ]] || ! cmp -s "$tmp/$name" "shaders/$name"; then
		echo "shaders: $name is stale; run make shaders"
		stale=1
	fi
done
if ((stale != 0)); then
	exit 1
fi
echo "shaders: ${#sources[@]} SPIR-V files up to date"

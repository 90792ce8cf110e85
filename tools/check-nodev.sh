#!/usr/bin/env bash
# Checks that building vkflow reads no system Vulkan or shaderc header, so
# that `go build ./...` and `go get` work on a machine with a C compiler and
# no Vulkan -dev package (vk uses the Khronos headers vendored in
# vk/include; glsl declares the few libshaderc functions it calls itself).
#
# It compiles every cgo package again with gcc's -H (print each header
# opened) and fails if a path under a system Vulkan or shaderc include folder
# appears. Where unprivileged user and mount namespaces are allowed, the
# build also runs with those folders hidden behind an empty directory, so a
# stray include fails to compile at all (CHECK_NODEV_NO_UNSHARE=1 skips
# that part).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
hidden=(/usr/include/vulkan /usr/include/vk_video /usr/include/shaderc)

mapfile -t pkgs < <($GO list -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./...)
if ((${#pkgs[@]} == 0)); then
	echo "check-nodev: no cgo packages found" >&2
	exit 1
fi
# A fresh -D per run makes the cgo packages (and runtime/cgo) compile again
# instead of coming from the build cache; gcc does not record -D in the
# objects, so the packages that import them are not rebuilt.
export CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -H -DVKFLOW_CHECK_NODEV=$$$RANDOM"
log=$(mktemp)
empty=$(mktemp -d)
trap 'rm -rf "$log" "$empty"' EXIT

how="gcc -H"
if [ -z "${CHECK_NODEV_NO_UNSHARE:-}" ] && unshare -rm true 2>/dev/null; then
	how="gcc -H, with ${hidden[*]} hidden (unshare)"
	binds=""
	for d in "${hidden[@]}"; do
		if [ -d "$d" ]; then
			binds+="mount --bind '$empty' '$d' && "
		fi
	done
	build() { unshare -rm sh -c "$binds exec \"\$0\" build \"\$@\"" "$GO" "${pkgs[@]}"; }
else
	build() { $GO build "${pkgs[@]}"; }
fi
if ! build >"$log" 2>&1; then
	grep -vE '^\.+ ' "$log" >&2 || true
	echo "check-nodev: FAIL: the cgo packages do not build ($how)" >&2
	exit 1
fi
pattern=$(printf '%s/|' "${hidden[@]}")
if grep -E "^\.+ (${pattern%|})" "$log" | sort -u | head -20 | grep . >&2; then
	echo "check-nodev: FAIL: the build read the system headers above" >&2
	exit 1
fi
# Guard against a vacuous pass: the vendored header must show in the log.
if ! grep -qE '^\.+ .*vk/include/vulkan/vulkan_core\.h$' "$log"; then
	echo "check-nodev: FAIL: no header list from gcc (was anything compiled?)" >&2
	exit 1
fi
echo "check-nodev: ok: ${pkgs[*]##*/} build without system Vulkan or shaderc headers ($how)"

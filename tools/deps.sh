#!/usr/bin/env bash
# Installs the Debian packages vkflow needs, when any is missing.
# Idempotent; uses sudo when not root. Downloads only through apt.
set -euo pipefail

# The DLPack consumers the tests run: Debian's NumPy and PyTorch for
# /usr/bin/python3 (python3-venv and python3-pip for `pip install ./python`
# into a venv), and the DLPack 0.6 C header. OpenBLAS: the BLAS that
# bench/ops.sh loads for NumPy's side of the matmul benchmark.
packages=(mesa-vulkan-drivers libvulkan1 libvulkan-dev vulkan-validationlayers glslc libshaderc-dev gcc
	python3 python3-venv python3-pip python3-numpy python3-torch libdlpack-dev libopenblas0-pthread
	python3-sklearn python3-dask python3-distributed python3-pytest python3-hypothesis python3-pytest-timeout)
missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
if ((${#missing[@]} == 0)); then
	echo "deps: all packages present"
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

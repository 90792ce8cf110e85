#!/usr/bin/env bash
# The soft rasterizer's benchmarks (docs/RENDERING.md, docs/BENCHMARKS.md), in one run on this machine:
#   - bench/render_torch.py: forward + backward of 64 triangles into 256x256, float32, through
#     vkflow.torch.soft_render (host copies included) against the straightforward PyTorch
#     implementation of the formula (python/tests/render_ref.py) on the CPU, rounds interleaved;
#     the memory each keeps for the backward;
#   - BenchmarkSoftRender (ops/render): the same render's forward and backward graphs alone (no host
#     copies, validation on), and the render with rasterizer and blender on one queue against two.
# Prints medians and the ratios (goal: vkflow at most 0.2x PyTorch's time).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
PY=${PY:-/usr/bin/python3}
COUNT=${COUNT:-5}
out=bench/out
mkdir -p "$out"
make --no-print-directory python >/dev/null
(cd python && PYTHONPATH=. $PY ../bench/render_torch.py) | tee "$out/render_py.txt"
$GO test ./ops/render -run '^$' -bench '^BenchmarkSoftRender$' -benchtime 5x -count "$COUNT" | tee "$out/render_go.txt"
$PY - "$out/render_py.txt" "$out/render_go.txt" <<'PYEOF'
import re, statistics, sys
py = dict((l.split()[0], float(l.split()[1])) for l in open(sys.argv[1]) if l.strip())
go = {}
for line in open(sys.argv[2]):
    m = re.match(r"Benchmark(\S+?)-\d+\s+\d+\s+(\d+) ns/op", line)
    if m:
        go.setdefault(m.group(1), []).append(int(m.group(2)) / 1e6)
g = {k: statistics.median(v) for k, v in go.items()}
print("\nPyTorch: %d threads. Gradients agree to %.1e (large) and %.1e (small) relative (float32)."
      % (py["torch_threads"], py["maxdiff_tri_large"], py["maxdiff_tri_small"]))
print("\n| workload (64 triangles, 256x256, float32, forward + backward) | vkflow ms | PyTorch ms | ratio |")
print("|---|---|---|---|")
for kind, what in (("large", "large triangles (vertices uniform over the image)"),
                   ("small", "small triangles (4 to 32 px)")):
    print("| %s | %.1f | %.1f | %.3fx |" % (what, py["vkflow_" + kind], py["torch_" + kind],
                                           py["vkflow_" + kind] / py["torch_" + kind]))
print("\n| memory | vkflow bytes | PyTorch bytes | ratio |")
print("|---|---|---|---|")
print("| kept for the backward (saved tensors) | %d | %d | %.3fx |" % (py["saved_vkflow"], py["saved_torch"],
                                                                     py["saved_vkflow"] / py["saved_torch"]))
print("| all of vkflow's graphs' memory, against PyTorch's saved tensors | %d | %d | %.3fx |"
      % (py["device_vkflow"], py["saved_torch"], py["device_vkflow"] / py["saved_torch"]))
print("| peak resident growth, first forward + backward (fresh process) | %d | %d | %.3fx |"
      % (py["peak_vkflow"], py["peak_torch"], py["peak_vkflow"] / py["peak_torch"]))
print("\n| graphs alone (Go, large triangles) | ms |")
print("|---|---|")
for k in ("forward", "backward", "both", "both-1q"):
    print("| %s | %.1f |" % (k, g["SoftRender/" + k]))
print("\nTwo logical queues against one (forward + backward): %.2fx (lavapipe has one physical queue)"
      % (g["SoftRender/both"] / g["SoftRender/both-1q"]))
PYEOF

#!/usr/bin/env bash
# The gradient benchmarks (docs/GRADIENTS.md, docs/BENCHMARKS.md), all in
# one run on this machine:
#   - BenchmarkMLPGrad (ops/internal/opcore): a forward+backward step of a
#     two-layer MLP, its Tape.Grad backward graph replayed against the eager
#     backward (Stream.VJP) on the same device, and against the backward
#     graph without its buffer reuse (with the bytes each allocates);
#   - BenchmarkMatmulWeightGrad (ops/internal/opcore): the weight-gradient product
#     8x25000 @ 25000x16 float32 with split-K, against the kernel without
#     it and against NumPy's;
#   - bench/grad_torch.py: the same MLP step through vkflow.torch.ops
#     against pure PyTorch on the CPU.
# Prints medians and the ratios. The Go benchmarks run with the validation
# layer on (testutil.Manager), on both sides of each Go ratio.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
PY=${PY:-/usr/bin/python3}
COUNT=${COUNT:-5}
out=bench/out
mkdir -p "$out"
make --no-print-directory python >/dev/null
$GO test ./ops/internal/opcore -run '^$' -bench '^BenchmarkMLPGrad$' -benchtime 20x -count "$COUNT" | tee "$out/grad_go.txt"
$GO test ./ops/internal/opcore -run '^$' -bench '^BenchmarkMatmulWeightGrad$' -benchtime 5x -count "$COUNT" | tee -a "$out/grad_go.txt"
(cd python && PYTHONPATH=. $PY ../bench/grad_torch.py) | tee "$out/grad_py.txt"
$PY - "$out/grad_go.txt" "$out/grad_py.txt" <<'PYEOF'
import re, statistics, sys
go = {}
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(\S+?)-\d+\s+\d+\s+(\d+) ns/op", line)
    if m:
        go.setdefault(m.group(1), []).append(int(m.group(2)) / 1e6)
g = {k: statistics.median(v) for k, v in go.items()}
py = dict((l.split()[0], float(l.split()[1])) for l in open(sys.argv[2]) if l.strip())
rows = [
    ("MLP step, Tape.Grad graphs replayed", g["MLPGrad/graph"], "eager backward (Stream.VJP)", g["MLPGrad/eager"]),
    ("MLP step, backward graph reusing dead buffers", g["MLPGrad/graph"], "the same without the reuse", g["MLPGrad/graph-noreuse"]),
    ("weight gradient 8x25000 @ 25000x16, split-K", g["MatmulWeightGrad/splitk"], "NumPy", py["weightgrad_numpy"]),
    ("weight gradient, split-K", g["MatmulWeightGrad/splitk"], "the same without split-K", g["MatmulWeightGrad/nosplit"]),
    ("MLP step, vkflow.torch.ops", py["mlp_step_vkflow_torch"], "PyTorch CPU", py["mlp_step_torch_cpu"]),
]
print("\n| workload | vkflow ms | baseline | baseline ms | ratio (vkflow/baseline) |")
print("|---|---|---|---|---|")
for name, ours, base, theirs in rows:
    print("| %s | %.3f | %s | %.3f | %.2fx |" % (name, ours, base, theirs, ours / theirs))
mem = {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkMLPGrad/(\S+?)-\d+\s.*?(\d+) bw-alloc-B", line)
    if m:
        mem[m.group(1)] = int(m.group(2))
if "graph" in mem and "graph-noreuse" in mem:
    print("\nMLP backward graph memory: %d bytes allocated with the reuse, %d without (%.2fx)"
          % (mem["graph"], mem["graph-noreuse"], mem["graph"] / mem["graph-noreuse"]))
PYEOF

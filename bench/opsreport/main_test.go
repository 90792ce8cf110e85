package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	// add_1m: C 4 ms twice, vkflow 4.2/4.4/4.6 ms (the last as med-ns/op,
	// its mean 1 ms ignored): ratio 4/4.4 = 0.91 (met).
	// add_16m: C 80 ms, vkflow 100 ms: 0.80 (not met). sum_16m: 4 bytes
	// per element in 50 ms against copy's 8 in 100 ms: 1.00 (met).
	// matmul: vkflow 200 ms vs NumPy 100 ms: 0.50. add_1m_ckernel and
	// NumPy's 1-thread run are absent.
	raw := `ops: device 0: llvmpipe (LLVM 15.0.6, 256 bits)
cpu: Test CPU
BenchmarkC/add_1m-2	30	4000000 ns/op	3.15 GB/s
BenchmarkC/add_1m-2	30	4000000 ns/op	3.15 GB/s
BenchmarkOps/add_1m-2	30	4200000 ns/op	3.0 GB/s
BenchmarkOps/add_1m-2	30	4400000 ns/op	3.0 GB/s
BenchmarkOps/add_1m-2	30	1000000 ns/op	3.0 GB/s	4600000 med-ns/op
BenchmarkC/add_16m-2	3	80000000 ns/op
BenchmarkOps/add_16m-2	3	100000000 ns/op
BenchmarkC/copy_16m-2	3	100000000 ns/op
BenchmarkOps/sum_16m-2	3	50000000 ns/op
BenchmarkOps/matmul_1024-2	1	200000000 ns/op	10.7 GFLOP/s
numpy: default: NumPy 1.24.2, BLAS /x/libopenblas.so, 2 threads
BenchmarkNumPy/matmul_1024_default-2	3	100000000 ns/op	21.47 GFLOP/s
--- SKIP: BenchmarkOps/add_1m_ckernel
`
	res := newResults()
	require.NoError(t, res.parse(strings.NewReader(raw)))
	var b strings.Builder
	render(&b, res, "DATE")
	out := b.String()
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		for _, c := range comparisons {
			if strings.HasPrefix(line, "| "+c.what+" |") {
				rows[c.what] = line
			}
		}
	}
	require.Len(t, rows, len(comparisons), out)
	assert.Contains(t, out, "DATE · Test CPU · llvmpipe (LLVM 15.0.6, 256 bits)")
	assert.Contains(t, rows[comparisons[0].what], "| 2.86 GB/s | 4.400 ms | 3.15 GB/s | 4.000 ms | 0.91x | — | >= 0.9x | **MET** |")
	assert.Contains(t, rows[comparisons[1].what], "| 0.80x | 0.80x (0.80–0.80) | >= 0.9x | **NOT MET** |")
	assert.Contains(t, rows[comparisons[2].what], "| missing | — |")
	assert.Contains(t, rows[comparisons[2].what], "**MISSING**")
	assert.Contains(t, rows[comparisons[4].what], "| 1.34 GB/s | 50.000 ms | 1.34 GB/s | 100.000 ms | 1.00x | 1.00x (1.00–1.00) | >= 0.8x | **MET** |")
	assert.Contains(t, rows[comparisons[5].what], "| 10.74 GFLOP/s | 200.000 ms | 21.47 GFLOP/s | 100.000 ms | 0.50x | 0.50x (0.50–0.50) | report | reported |")
	assert.Contains(t, rows[comparisons[6].what], "no baseline result")
	assert.Contains(t, out, "NumPy (default): NumPy 1.24.2, BLAS /x/libopenblas.so, 2 threads.")
}

func TestPaired(t *testing.T) {
	// Two rounds, two vkflow samples per round: round 1 vkflow median 5 ms
	// vs C 4 ms (0.8), round 2 vkflow 4 ms vs C 4 ms (1.0).
	raw := `BenchmarkC/add_1m-2	1	4000000 ns/op
BenchmarkOps/add_1m-2	1	4000000 ns/op
BenchmarkOps/add_1m-2	1	6000000 ns/op
BenchmarkC/add_1m-2	1	4000000 ns/op
BenchmarkOps/add_1m-2	1	3000000 ns/op
BenchmarkOps/add_1m-2	1	5000000 ns/op
`
	res := newResults()
	require.NoError(t, res.parse(strings.NewReader(raw)))
	med, lo, hi, ok := res.paired(comparisons[0])
	require.True(t, ok)
	assert.InDelta(t, 0.9, med, 1e-12)
	assert.InDelta(t, 0.8, lo, 1e-12)
	assert.InDelta(t, 1.0, hi, 1e-12)
	res.ns["Ops"]["add_1m"] = res.ns["Ops"]["add_1m"][:3]
	_, _, _, ok = res.paired(comparisons[0])
	assert.False(t, ok, "3 vkflow samples do not pair with 2 C samples")
}

func TestParseRejectsBadNs(t *testing.T) {
	res := newResults()
	assert.Error(t, res.parse(strings.NewReader("BenchmarkC/add_1m-2\t3\t0 ns/op\n")))
}

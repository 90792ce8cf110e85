package opcore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/ops/internal/opstest"
	"github.com/vkflow/vkflow/tensor"
)

// BenchmarkMatmul reports GFLOP/s of a prepared n×n×n matmul run
// repeatedly (warm), and of a plain Go i-k-j loop on one core in the same
// run, as the baseline of the ratio.
func BenchmarkMatmul(b *testing.B) {
	m, _ := testutil.Manager(b)
	ctx := context.Background()
	for _, c := range []struct {
		dt tensor.Dtype
		n  int
	}{{tensor.Float32, 1024}, {tensor.Float16, 1024}, {tensor.Float32, 256}} {
		n := c.n
		flop := 2 * float64(n) * float64(n) * float64(n)
		b.Run(fmt.Sprintf("%v/%d", c.dt, n), func(b *testing.B) {
			x := make([]float64, n*n)
			for i := range x {
				x[i] = float64(i%7) / 8
			}
			xa, err := tensor.FromSlice(m, opstest.Conv(x, func(v float64) float32 { return float32(v) }), n, n)
			require.NoError(b, err)
			defer xa.Close()
			var a *tensor.Tensor = xa
			if c.dt == tensor.Float16 {
				a, err = tensor.FromSlice(m, opstest.Conv(x, func(v float64) tensor.Half { return tensor.HalfFrom(float32(v)) }), n, n)
				require.NoError(b, err)
				defer a.Close()
			}
			op, err := ops.Matmul(m, a, a, nil)
			require.NoError(b, err)
			defer op.Close()
			defer op.Out().Close()
			require.NoError(b, op.Run(ctx))
			b.ResetTimer()
			for range b.N {
				if err := op.Run(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	b.Run("go-loop/float32/1024", func(b *testing.B) {
		const n = 1024
		x := make([]float32, n*n)
		for i := range x {
			x[i] = float32(i%7) / 8
		}
		out := make([]float32, n*n)
		for range b.N {
			clear(out)
			for i := range n {
				row := out[i*n : i*n+n]
				for l := range n {
					v := x[i*n+l]
					for j, w := range x[l*n : l*n+n] {
						row[j] += v * w
					}
				}
			}
		}
		b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// BenchmarkMatmulWeightGrad times the weight-gradient product Xᵀ·G of a
// batch: [8, 25000] @ [25000, 16] float32 (a long inner dimension, a small
// output), prepared and run warm: split-K, and the kernel before it
// (split-K off) in the same run. bench/grad.sh puts NumPy's time for the
// same product beside them.
func BenchmarkMatmulWeightGrad(b *testing.B) {
	m, _ := testutil.Manager(b)
	ctx := context.Background()
	const mm, k, n = 8, 25000, 16
	av := make([]float32, mm*k)
	for i := range av {
		av[i] = float32(i%13)/13 - 0.5
	}
	bv := make([]float32, k*n)
	for i := range bv {
		bv[i] = float32(i%7)/7 - 0.5
	}
	a, err := tensor.FromSlice(m, av, mm, k)
	require.NoError(b, err)
	defer a.Close()
	bt, err := tensor.FromSlice(m, bv, k, n)
	require.NoError(b, err)
	defer bt.Close()
	for _, split := range []bool{true, false} {
		name := "splitk"
		if !split {
			name = "nosplit"
		}
		b.Run(name, func(b *testing.B) {
			if !split {
				defer opcore.SetSplitKMinK(1 << 62)()
			}
			op, err := ops.Matmul(m, a, bt, nil)
			require.NoError(b, err)
			defer op.Close()
			defer op.Out().Close()
			require.NoError(b, op.Run(ctx))
			b.ResetTimer()
			for range b.N {
				if err := op.Run(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package opcore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// BenchmarkTranspose reports GB/s (bytes read + written) of a 2-D
// transpose through shared-memory tiles and of a 3-D permute that
// gathers, against a buffer copy of the same size in the same run.
func BenchmarkTranspose(b *testing.B) {
	m, _ := testutil.Manager(b)
	ctx := context.Background()
	const n = 1 << 22 // 16 MiB of float32
	x, err := tensor.New(m, tensor.Float32, []int{2048, 2048})
	require.NoError(b, err)
	defer x.Close()
	x3, err := tensor.New(m, tensor.Float32, []int{128, 128, 256})
	require.NoError(b, err)
	defer x3.Close()
	report := func(b *testing.B) {
		b.ReportMetric(float64(2*4*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	}
	for _, c := range []struct {
		name string
		x    *tensor.Tensor
		perm []int
	}{{"tile-2d", x, nil}, {"gather-3d", x3, []int{2, 0, 1}}, {"identity", x, []int{0, 1}}} {
		b.Run(c.name, func(b *testing.B) {
			op, err := ops.Transpose(m, c.x, c.perm, nil)
			require.NoError(b, err)
			defer op.Close()
			defer op.Out().Close()
			s, err := sequence.New(m, 0)
			require.NoError(b, err)
			defer s.Close()
			require.NoError(b, op.Record(s).Eval(ctx))
			b.ResetTimer()
			for range b.N {
				if err := s.Eval(ctx); err != nil {
					b.Fatal(err)
				}
			}
			report(b)
		})
	}
	b.Run("copy-baseline", func(b *testing.B) {
		y, err := tensor.New(m, tensor.Float32, []int{n})
		require.NoError(b, err)
		defer y.Close()
		s, err := sequence.New(m, 0)
		require.NoError(b, err)
		defer s.Close()
		src, err := tensor.New(m, tensor.Float32, []int{n})
		require.NoError(b, err)
		defer src.Close()
		s.Copy(src, y)
		require.NoError(b, s.Eval(ctx))
		b.ResetTimer()
		for range b.N {
			if err := s.Eval(ctx); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
}

package opcore_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// TestMatmulSplitK: products with a small output and a long k take the
// split path (one slice dispatch and one sum), match a float64 CPU
// product, and give the same bits at every run.
func TestMatmulSplitK(t *testing.T) {
	m, _ := testutil.Manager(t)
	rnd := rand.New(rand.NewPCG(9, 9))
	for _, c := range []struct {
		name   string
		dt     tensor.Dtype
		as, bs []int
		split  bool
	}{
		{"weight gradient", tensor.Float32, []int{8, 5000}, []int{5000, 16}, true},
		{"float64 batch", tensor.Float64, []int{3, 5, 4099}, []int{4099, 7}, true},
		{"broadcast batch", tensor.Float32, []int{2, 1, 3, 3000}, []int{4, 3000, 2}, true},
		{"vector", tensor.Float32, []int{6000}, []int{6000, 3}, true},
		{"short k", tensor.Float32, []int{8, 1000}, []int{1000, 16}, false},
		{"float16 not split", tensor.Float16, []int{4, 3000}, []int{3000, 4}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			av := make([]float64, numelOf(c.as))
			for i := range av {
				av[i] = rnd.Float64()*2 - 1
			}
			bv := make([]float64, numelOf(c.bs))
			for i := range bv {
				bv[i] = rnd.Float64()*2 - 1
			}
			a := linTensor(t, m, c.dt, av, c.as)
			b := linTensor(t, m, c.dt, bv, c.bs)
			op, err := ops.Matmul(m, a, b, nil)
			require.NoError(t, err)
			defer op.Close()
			defer op.Out().Close()
			if c.split {
				assert.Equal(t, 2, op.Dispatches())
			} else {
				assert.Equal(t, 1, op.Dispatches())
			}
			require.NoError(t, op.Run(context.Background()))
			got := linRead(t, op.Out())
			want, _, _ := refMatmul(av, c.as, bv, c.bs)
			require.Len(t, got, len(want))
			k := c.as[len(c.as)-1]
			tol := 1e-12 * float64(k)
			if c.dt != tensor.Float64 {
				tol = 4e-6 * float64(k)
				if c.dt == tensor.Float16 {
					tol = 1e-2 * float64(k)
				}
			}
			for i := range want {
				require.InDelta(t, want[i], got[i], tol, "element %d", i)
			}
			for range 3 {
				require.NoError(t, op.Run(context.Background()))
				assert.Equal(t, got, linRead(t, op.Out()), "not bit-identical from run to run")
			}
		})
	}
}

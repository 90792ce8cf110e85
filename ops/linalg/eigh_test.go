package linalg_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

func TestEigh(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		kind  string
		batch []int
		n     int
	}{
		{"sym", nil, 1},
		{"sym", nil, 2},
		{"sym", []int{2, 3}, 5},
		{"sym", []int{5}, 8},
		{"sym", nil, 37},
		{"swap", []int{2}, 4}, // eigenvalues ±1: equal magnitudes, opposite signs
		{"eye", nil, 6},       // one eigenvalue repeated
		{"zero", []int{2}, 3},
		{"upper", nil, 4}, // garbage above the diagonal: only the lower triangle counts
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			t.Run(fmt.Sprintf("%s/%v/%v%d", tc.kind, dt, tc.batch, tc.n), func(t *testing.T) {
				checkEigh(t, m, rng, dt, tc.kind, tc.batch, tc.n)
			})
		}
	}
}

func eighMatrix(rng *rand.Rand, dt tensor.Dtype, kind string, b, n int) (x, sym []float64) {
	switch kind {
	case "sym", "zero":
		x = specMatrix(rng, dt, map[string]string{"sym": "sym", "zero": "zero"}[kind], b, n, n)
	case "swap", "eye", "upper":
		x = make([]float64, b*n*n)
		for k := range b {
			a := x[k*n*n : (k+1)*n*n]
			for i := range n {
				switch kind {
				case "swap":
					a[i*n+(n-1-i)] = 1
				case "eye":
					a[i*n+i] = -3
				case "upper":
					for j := range n {
						a[i*n+j] = roundTo(dt, rng.Float64()*2-1)
					}
				}
			}
		}
	}
	sym = append([]float64(nil), x...)
	for k := range b {
		a := sym[k*n*n : (k+1)*n*n]
		for i := range n {
			for j := range i {
				a[j*n+i] = a[i*n+j]
			}
		}
	}
	return x, sym
}

func checkEigh(t *testing.T, m *vkflow.Manager, rng *rand.Rand, dt tensor.Dtype, kind string, batch []int, n int) {
	B := numelOf(batch)
	a, sym := eighMatrix(rng, dt, kind, B, n)
	x := linTensor(t, m, dt, a, append(append([]int{}, batch...), n, n))
	outs := callOp(t, m, "eigh", x, ops.Attrs{})
	require.Len(t, outs, 2)
	assert.Equal(t, append(append([]int{}, batch...), n), outs[0].Shape())
	assert.Equal(t, append(append([]int{}, batch...), n, n), outs[1].Shape())
	W, V := linRead(t, outs[0]), linRead(t, outs[1])
	WV := linRead(t, callOp(t, m, "eigvalsh", x, ops.Attrs{})[0])
	tol := linTol(dt) * math.Sqrt(float64(n))
	for b := range B {
		am := matAt(sym, b, n, n)
		ref := refEigSym(am, n)
		scale := math.Max(math.Abs(ref[0]), math.Abs(ref[n-1]))
		if scale == 0 {
			scale = 1
		}
		w := W[b*n : (b+1)*n]
		for i := range n {
			require.InDelta(t, ref[i], w[i], tol*scale, "matrix %d: w[%d] of %v (want %v)", b, i, w, ref)
			require.InDelta(t, ref[i], WV[b*n+i], tol*scale, "matrix %d: eigvalsh[%d]", b, i)
		}
		v := matAt(V, b, n, n)
		require.Less(t, orthoErr(v, n, n, false), tol, "VᵀV = I (matrix %d)", b)
		av := mulRef(am, v, n, n, n)
		for i := range n {
			for j := range n {
				require.InDelta(t, v[i*n+j]*w[j], av[i*n+j], tol*scale, "A V = V diag(w) (matrix %d, %d,%d)", b, i, j)
			}
		}
	}
}

func TestEighRefuses(t *testing.T) {
	m, _ := testutil.Manager(t)
	rect := linTensor(t, m, tensor.Float32, make([]float64, 6), []int{2, 3})
	for _, name := range []string{"eigh", "eigvalsh"} {
		_, err := ops.Call(context.Background(), m, name, []*tensor.Tensor{rect}, nil, ops.Attrs{})
		assert.ErrorContains(t, err, "square", name)
		assert.ErrorIs(t, err, vkflow.ErrInvalid, name)
	}
	// Empty stacks and 0×0 matrices give empty results.
	for _, shape := range [][]int{{0, 3, 3}, {2, 0, 0}} {
		x := linTensor(t, m, tensor.Float64, nil, shape)
		outs := callOp(t, m, "eigh", x, ops.Attrs{})
		assert.Equal(t, shape[:2], outs[0].Shape())
		assert.Equal(t, shape, outs[1].Shape())
	}
}

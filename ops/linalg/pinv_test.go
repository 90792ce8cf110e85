package linalg_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// pinv's result P of A must meet the Penrose conditions: A P A = A,
// P A P = P, A P and P A symmetric.
func TestPinv(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		kind  string
		batch []int
		M, N  int
		dts   []tensor.Dtype
	}{
		{"random", nil, 1, 1, nil},
		{"random", []int{3}, 5, 3, nil},
		{"random", []int{2}, 3, 5, nil},
		{"rank1", nil, 6, 4, nil},
		{"rank1", nil, 4, 6, nil},
		{"zero", nil, 3, 3, nil},
		{"random", []int{0}, 3, 2, nil}, // no matrices
		{"random", []int{2}, 0, 3, nil}, // matrices of no elements
		{"random", nil, 4, 4, []tensor.Dtype{tensor.Float16}},
	} {
		dts := tc.dts
		if dts == nil {
			dts = []tensor.Dtype{tensor.Float32, tensor.Float64}
		}
		for _, dt := range dts {
			t.Run(fmt.Sprintf("%s/%v/%v%dx%d", tc.kind, dt, tc.batch, tc.M, tc.N), func(t *testing.T) {
				B := numelOf(tc.batch)
				a := specMatrix(rng, dt, tc.kind, B, tc.M, tc.N)
				x := linTensor(t, m, dt, a, append(append([]int{}, tc.batch...), tc.M, tc.N))
				out := callOp(t, m, "pinv", x, ops.Attrs{})[0]
				require.Equal(t, append(append([]int{}, tc.batch...), tc.N, tc.M), out.Shape())
				P := linRead(t, out)
				M, N := tc.M, tc.N
				if M*N == 0 {
					require.Empty(t, P)
					return
				}
				for b := range B {
					am, pm := matAt(a, b, M, N), matAt(P, b, N, M)
					s := refSingular(am, M, N)
					smin := s[0]
					for _, v := range s {
						if v > 1e-3*s[0] {
							smin = v
						}
					}
					// Errors scale with the condition number of the kept part.
					tol := 50 * linTol(dt) * s[0] / math.Max(smin, 1e-300)
					if s[0] == 0 {
						for _, v := range pm {
							require.Equal(t, 0.0, v)
						}
						continue
					}
					apa := mulRef(mulRef(am, pm, M, N, M), am, M, M, N)
					for i := range apa {
						require.InDelta(t, am[i], apa[i], tol*s[0], "A P A = A (matrix %d)", b)
					}
					pap := mulRef(mulRef(pm, am, N, M, N), pm, N, N, M)
					for i := range pap {
						require.InDelta(t, pm[i], pap[i], tol/smin, "P A P = P (matrix %d)", b)
					}
					ap := mulRef(am, pm, M, N, M)
					for i := range M {
						for j := range M {
							require.InDelta(t, ap[i*M+j], ap[j*M+i], tol, "A P symmetric (matrix %d)", b)
						}
					}
				}
			})
		}
	}
}

func TestMatrixRank(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		// random 5×3 (rank 3), rank1 6×4, zero 3×3, random 2×7 (rank 2).
		var got []float64
		for _, tc := range []struct {
			kind string
			M, N int
		}{{"random", 5, 3}, {"rank1", 6, 4}, {"zero", 3, 3}, {"random", 2, 7}} {
			x := linTensor(t, m, dt, specMatrix(rng, dt, tc.kind, 2, tc.M, tc.N), []int{2, tc.M, tc.N})
			out := callOp(t, m, "matrix_rank", x, ops.Attrs{})[0]
			assert.Equal(t, tensor.Int64, out.Dtype())
			got = append(got, linRead(t, out)...)
		}
		assert.Equal(t, []float64{3, 3, 1, 1, 0, 0, 2, 2}, got, "%v", dt)
		// rtol: an attribute, or one per matrix. diag(4, 2, 1): 1 > 0.2·4
		// but not 0.3·4; 2 > 0.3·4 but not 0.6·4.
		d := []float64{4, 0, 0, 0, 2, 0, 0, 0, 1}
		x := linTensor(t, m, dt, append(append(append([]float64{}, d...), d...), d...), []int{3, 3, 3})
		r := 0.3
		assert.Equal(t, []float64{2, 2, 2}, linRead(t, callOp(t, m, "matrix_rank", x, ops.Attrs{Rtol: &r})[0]))
		r = 0 // a literal 0 once let the compiler drop a binding
		assert.Equal(t, []float64{3, 3, 3}, linRead(t, callOp(t, m, "matrix_rank", x, ops.Attrs{Rtol: &r})[0]))
		assert.Len(t, linRead(t, callOp(t, m, "pinv", x, ops.Attrs{Rtol: &r})[0]), 27)
		rt := linTensor(t, m, dt, []float64{0.2, 0.3, 0.6}, []int{3})
		assert.Equal(t, []float64{3, 2, 1}, linRead(t, callOp(t, m, "matrix_rank", x, ops.Attrs{}, rt)[0]))
		// pinv with a per-matrix rtol: diag(1/4, 1/2, 1/1) cut to the kept
		// values.
		p := linRead(t, callOp(t, m, "pinv", x, ops.Attrs{}, rt)[0])
		want := []float64{0.25, 0, 0, 0, 0.5, 0, 0, 0, 1, 0.25, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.25, 0, 0, 0, 0, 0, 0, 0, 0}
		assert.InDeltaSlice(t, want, p, 1e-6)
	}
}

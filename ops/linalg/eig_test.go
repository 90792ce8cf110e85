package linalg_test

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/linalg"
	"github.com/vkflow/vkflow/tensor"
)

// eigMatrix makes b n×n matrices of a kind, and, where the kind knows
// them, their exact eigenvalues.
func eigMatrix(rng *rand.Rand, dt tensor.Dtype, kind string, b, n int) (a []complex128, want [][]complex128) {
	a = make([]complex128, b*n*n)
	want = make([][]complex128, b)
	cx := dt.IsComplex()
	rnd := func() complex128 {
		if cx {
			return complex(2*rng.Float64()-1, 2*rng.Float64()-1)
		}
		return complex(2*rng.Float64()-1, 0)
	}
	for k := range b {
		m := a[k*n*n : (k+1)*n*n]
		switch kind {
		case "random":
			for i := range m {
				m[i] = rnd()
			}
		case "upper": // eigenvalues on the diagonal
			for i := range n {
				for j := i; j < n; j++ {
					m[i*n+j] = rnd()
				}
				want[k] = append(want[k], m[i*n+i])
			}
		case "rotation": // blocks [c -s; s c]: eigenvalues c ± i s
			for i := 0; i+1 < n; i += 2 {
				th := rng.Float64()*2 + 0.3
				c, s := math.Cos(th), math.Sin(th)
				m[i*n+i], m[i*n+i+1], m[(i+1)*n+i], m[(i+1)*n+i+1] = complex(c, 0), complex(-s, 0), complex(s, 0), complex(c, 0)
				want[k] = append(want[k], complex(c, s), complex(c, -s))
			}
			if n%2 == 1 {
				m[n*n-1] = 0.5
				want[k] = append(want[k], 0.5)
			}
		case "permutation": // a cyclic shift: the n-th roots of unity (exceptional shifts)
			for i := range n {
				m[((i+1)%n)*n+i] = 1
				want[k] = append(want[k], cmplx.Rect(1, 2*math.Pi*float64(i)/float64(n)))
			}
		case "jordan": // one Jordan block of eigenvalue 2: defective
			for i := range n {
				m[i*n+i] = 2
				if i+1 < n {
					m[i*n+i+1] = 1
				}
				want[k] = append(want[k], 2)
			}
		case "graded": // D (Q T Qᵀ) D⁻¹: D = diag(2^(g i)) exact, T upper
			// triangular with a known diagonal, Q a reflection
			g := 8.0
			if dt == tensor.Float32 || dt == tensor.Complex64 {
				g = 3
			}
			u := make([]float64, n)
			var un float64
			for i := range u {
				u[i] = 2*rng.Float64() - 1
				un += u[i] * u[i]
			}
			q := func(i, j int) float64 {
				v := -2 * u[i] * u[j] / un
				if i == j {
					v++
				}
				return v
			}
			tt := make([]complex128, n*n)
			for i := range n {
				for j := i; j < n; j++ {
					tt[i*n+j] = rnd()
				}
				want[k] = append(want[k], tt[i*n+i])
			}
			for i := range n {
				for j := range n {
					var s complex128
					for p := range n {
						for r := range n {
							s += complex(q(i, p), 0) * tt[p*n+r] * complex(q(j, r), 0)
						}
					}
					m[i*n+j] = s * complex(math.Exp2(g*float64(i-j)), 0)
				}
			}
		case "zero":
			for range n {
				want[k] = append(want[k], 0)
			}
		}
		for i := range m {
			m[i] = cxRound(dt, m[i])
			if !cx {
				m[i] = complex(roundTo(dt, real(m[i])), 0)
			}
		}
	}
	return a, want
}

func TestEig(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		kind   string
		batch  []int
		n      int
		budget int // the QR loop budget (small: sweeps span dispatches)
	}{
		{"random", nil, 1, 0},
		{"random", nil, 2, 0},
		{"random", []int{3}, 5, 0},
		{"random", []int{2, 2}, 9, 0},
		{"random", nil, 40, 0},
		{"random", []int{2}, 12, 40},
		{"upper", []int{2}, 7, 0},
		{"rotation", []int{2}, 7, 0},
		{"permutation", nil, 6, 0},
		{"jordan", nil, 4, 0},
		{"zero", []int{2}, 3, 0},
		{"graded", nil, 6, 0},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128} {
			t.Run(fmt.Sprintf("%s/%v/%v%d/b%d", tc.kind, dt, tc.batch, tc.n, tc.budget), func(t *testing.T) {
				if tc.budget > 0 {
					t.Cleanup(linalg.SetEigHooks(tc.budget, false))
				}
				checkEig(t, m, rng, dt, tc.kind, tc.batch, tc.n)
			})
		}
	}
}

// eigTol is the backward error bound: a few N·eps.
func eigTol(dt tensor.Dtype, n int) float64 { return 30 * float64(max(n, 4)) * cxEps(dt) }

func checkEig(t *testing.T, m ops.Owner, rng *rand.Rand, dt tensor.Dtype, kind string, batch []int, n int) {
	B := numelOf(batch)
	a, want := eigMatrix(rng, dt, kind, B, n)
	x := uploadAny(t, m, dt, a, shapeOf(batch, n, n))
	res, dts := cxCall(t, m, "eig", []*tensor.Tensor{x}, ops.Attrs{})
	cdt := tensor.Complex128
	if dt == tensor.Float32 || dt == tensor.Complex64 {
		cdt = tensor.Complex64
	}
	require.Equal(t, []tensor.Dtype{cdt, cdt}, dts)
	w, v := res[0], res[1]
	vals, _ := cxCall(t, m, "eigvals", []*tensor.Tensor{x}, ops.Attrs{})
	tol := eigTol(dt, n)
	for b := range B {
		A := a[b*n*n : (b+1)*n*n]
		W, V, WV := w[b*n:(b+1)*n], v[b*n*n:(b+1)*n*n], vals[0][b*n:(b+1)*n]
		norm := math.Max(cxMaxAbs(A)*float64(n), 1e-300)
		for k := range n {
			// Unit 2-norm, largest component real, and A v = w v.
			var n2, big, realBig float64
			for i := range n {
				c := V[i*n+k]
				n2 += real(c)*real(c) + imag(c)*imag(c)
				big = math.Max(big, cmplx.Abs(c))
				if imag(c) == 0 {
					realBig = math.Max(realBig, math.Abs(real(c)))
				}
			}
			assert.InDelta(t, 1, n2, 10*tol, "matrix %d: vector %d's norm", b, k)
			// Equal magnitudes are equal to rounding: the real one is
			// the largest but for that.
			assert.GreaterOrEqual(t, realBig, big*(1-tol), "matrix %d: vector %d's largest component is not real", b, k)
			var r float64
			for i := range n {
				var s complex128
				for j := range n {
					s += A[i*n+j] * V[j*n+k]
				}
				r = math.Max(r, cmplx.Abs(s-W[k]*V[i*n+k]))
			}
			if kind != "zero" {
				assert.LessOrEqual(t, r/norm, tol, "matrix %d: residual of pair %d (w = %v)", b, k, W[k])
			}
		}
		// Trace = the sum of the eigenvalues; eigvals agrees with eig.
		var tr, sum complex128
		for i := range n {
			tr += A[i*n+i]
			sum += W[i]
		}
		assert.LessOrEqual(t, cmplx.Abs(tr-sum), tol*norm, "matrix %d: trace", b)
		matchEig(t, W, WV, tol*norm*4, fmt.Sprintf("matrix %d: eigvals against eig", b))
		if want[b] != nil {
			etol := tol * norm
			if kind == "graded" { // balanced: errors of the ungraded matrix's size
				etol = tol * float64(n)
			}
			if kind == "jordan" { // (eps ||A||)^(1/n)
				etol = 4 * math.Pow(cxEps(dt)*norm, 1/float64(n))
			}
			matchEig(t, want[b], W, etol, fmt.Sprintf("matrix %d: eigenvalues", b))
		}
	}
}

// matchEig pairs each wanted eigenvalue with the nearest unused one of got.
func matchEig(t *testing.T, want, got []complex128, tol float64, what string) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range want {
		best, bi := math.Inf(1), -1
		for i, g := range got {
			if d := cmplx.Abs(g - w); !used[i] && d < best {
				best, bi = d, i
			}
		}
		require.GreaterOrEqual(t, bi, 0, what)
		used[bi] = true
		assert.LessOrEqual(t, best, tol, "%s: %v against %v", what, got[bi], w)
	}
}

// uploadAny makes a tensor of dt (real: the real parts) holding a.
func uploadAny(t *testing.T, m ops.Owner, dt tensor.Dtype, a []complex128, shape []int) *tensor.Tensor {
	t.Helper()
	if dt.IsComplex() {
		return cxUpload(t, m, dt, a, shape...)
	}
	var x *tensor.Tensor
	var err error
	if dt == tensor.Float32 {
		f := make([]float32, len(a))
		for i, v := range a {
			f[i] = float32(real(v))
		}
		x, err = tensor.FromSlice(m, f, shape...)
	} else {
		f := make([]float64, len(a))
		for i, v := range a {
			f[i] = real(v)
		}
		x, err = tensor.FromSlice(m, f, shape...)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// TestEigMutation: a wrong sign in Z's rotation breaks the vectors, and
// the residual check catches it.
func TestEigMutation(t *testing.T) {
	m, _ := testutil.Manager(t)
	t.Cleanup(linalg.SetEigHooks(0, true))
	rng := rand.New(rand.NewPCG(1, 2))
	a, _ := eigMatrix(rng, tensor.Float64, "random", 1, 6)
	x := uploadAny(t, m, tensor.Float64, a, []int{6, 6})
	res, _ := cxCall(t, m, "eig", []*tensor.Tensor{x}, ops.Attrs{})
	w, v := res[0], res[1]
	var worst float64
	for k := range 6 {
		for i := range 6 {
			var s complex128
			for j := range 6 {
				s += a[i*6+j] * v[j*6+k]
			}
			worst = math.Max(worst, cmplx.Abs(s-w[k]*v[i*6+k]))
		}
	}
	assert.Greater(t, worst, 1e-3, "the mutated kernel should give wrong vectors")
}

func TestEigSpecial(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	// NaN or infinity in a matrix: NaN results for it alone.
	a := []float64{1, 2, 3, 4, math.NaN(), 1, 0, 1, 2, 0, 0, 3, 1, 0, 0, 1, 0, 0}
	x, err := tensor.FromSlice(m, a, 2, 3, 3)
	require.NoError(t, err)
	defer x.Close()
	res, _ := cxCall(t, m, "eig", []*tensor.Tensor{x}, ops.Attrs{})
	for i := range 3 {
		assert.True(t, cmplx.IsNaN(res[0][i]), "eigenvalue %d of the NaN matrix", i)
	}
	for i := 3; i < 6; i++ {
		assert.False(t, cmplx.IsNaN(res[0][i]), "eigenvalue %d of the finite matrix", i)
	}
	for i := range 9 {
		assert.True(t, cmplx.IsNaN(res[1][i]))
		assert.False(t, cmplx.IsNaN(res[1][9+i]))
	}
	// Bad input is refused.
	for _, shape := range [][]int{{3}, {2, 3}} {
		y, err := tensor.New(m, tensor.Float32, shape)
		require.NoError(t, err)
		_, err = ops.Call(ctx, m, "eig", []*tensor.Tensor{y}, nil, ops.Attrs{})
		assert.Error(t, err, "shape %v", shape)
		require.NoError(t, y.Close())
	}
	big, err := tensor.New(m, tensor.Float32, []int{1025, 1025})
	require.NoError(t, err)
	_, err = ops.Call(ctx, m, "eigvals", []*tensor.Tensor{big}, nil, ops.Attrs{})
	assert.ErrorContains(t, err, "at most 1024", "a side past eigMaxN")
	require.NoError(t, big.Close())
	y, err := tensor.New(m, tensor.Int32, []int{2, 2})
	require.NoError(t, err)
	defer y.Close()
	_, err = ops.Call(ctx, m, "eigvals", []*tensor.Tensor{y}, nil, ops.Attrs{})
	assert.Error(t, err)
	// Empty stacks.
	e, err := tensor.New(m, tensor.Float32, []int{0, 3, 3})
	require.NoError(t, err)
	defer e.Close()
	outs, err := ops.Call(ctx, m, "eig", []*tensor.Tensor{e}, nil, ops.Attrs{})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 3}, outs[0].Shape())
	assert.Equal(t, []int{0, 3, 3}, outs[1].Shape())
	for _, o := range outs {
		require.NoError(t, o.Close())
	}
}

// TestEigBalanceMutation: without balancing, a graded matrix's eigenvalues
// are only accurate relative to its (huge) norm, and the test of "graded"
// catches it.
func TestEigBalanceMutation(t *testing.T) {
	m, _ := testutil.Manager(t)
	t.Cleanup(linalg.SetEigBalance(false))
	rng := rand.New(rand.NewPCG(5, 6))
	n := 6
	a, want := eigMatrix(rng, tensor.Float64, "graded", 1, n)
	x := uploadAny(t, m, tensor.Float64, a, []int{n, n})
	res, _ := cxCall(t, m, "eigvals", []*tensor.Tensor{x}, ops.Attrs{})
	worst := 0.0
	for _, w := range want[0] {
		best := math.Inf(1)
		for _, g := range res[0] {
			best = math.Min(best, cmplx.Abs(g-w))
		}
		worst = math.Max(worst, best)
	}
	assert.Greater(t, worst, eigTol(tensor.Float64, n)*float64(n), "unbalanced, the graded matrix's eigenvalues should be off")
}

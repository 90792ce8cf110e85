package linalg_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/linalg"
	"github.com/vkflow/vkflow/tensor"
)

// The spectral linalg ops on complex64 and complex128 against the
// complex128 references of spectral_complex_ref_test.go.

var csDtypes = []tensor.Dtype{tensor.Complex64, tensor.Complex128}

// csMatrices makes b random m×n complex matrices of a kind: "random",
// "rank1" (outer products) or "herm" (Hermitian), rounded to dt.
func csMatrices(rng *rand.Rand, dt tensor.Dtype, kind string, b, m, n int) []complex128 {
	var out []complex128
	for range b {
		var a []complex128
		switch kind {
		case "herm":
			a = csHermitian(rng, n)
		case "rank1":
			u, v := csRandom(rng, m), csRandom(rng, n)
			a = csMul(u, v, m, 1, n)
		default:
			a = csRandom(rng, m*n)
		}
		for i := range a {
			a[i] = cxRound(dt, a[i])
		}
		out = append(out, a...)
	}
	return out
}

func TestSVDComplex(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		kind  string
		batch []int
		M, N  int
	}{
		{"random", nil, 1, 1},
		{"random", nil, 5, 3},
		{"random", nil, 3, 5},
		{"random", []int{2}, 4, 4},
		{"random", nil, 24, 17},
		{"rank1", []int{2}, 5, 4},
		{"random", nil, 300, 3}, // R > 1 lanes per pair
	} {
		for _, dt := range csDtypes {
			for _, full := range []bool{true, false} {
				name := fmt.Sprintf("%s/%v/%v%dx%d/full=%v", tc.kind, dt, tc.batch, tc.M, tc.N, full)
				t.Run(name, func(t *testing.T) {
					checkSVDComplex(t, m, rng, dt, tc.kind, tc.batch, tc.M, tc.N, full)
				})
			}
		}
	}
}

func checkSVDComplex(t *testing.T, m *vkflow.Manager, rng *rand.Rand, dt tensor.Dtype, kind string, batch []int, M, N int, full bool) {
	B := numelOf(batch)
	a := csMatrices(rng, dt, kind, B, M, N)
	x := cxUpload(t, m, dt, a, append(append([]int{}, batch...), M, N)...)
	outs := callOp(t, m, "svd", x, ops.Attrs{FullMatrices: &full})
	require.Len(t, outs, 3)
	K := min(M, N)
	uc, vr := K, K
	if full {
		uc, vr = M, N
	}
	require.Equal(t, dt, outs[0].Dtype())
	require.Equal(t, dt.Real(), outs[1].Dtype())
	require.Equal(t, dt, outs[2].Dtype())
	U, S, Vh := readBack(t, outs[0]), readBack(t, outs[1]), readBack(t, outs[2])
	tol := linTol(dt.Real())
	for b := range B {
		ab := a[b*M*N : (b+1)*M*N]
		want := csSingular(ab, M, N)
		s := S[b*K : (b+1)*K]
		sc := max(want[0], 1)
		for i := range K {
			assert.InDelta(t, want[i], real(s[i]), tol*sc, "S[%d][%d]", b, i)
			if i > 0 {
				assert.GreaterOrEqual(t, real(s[i-1]), real(s[i]), "S descending")
			}
		}
		u := U[b*M*uc : (b+1)*M*uc]
		vh := Vh[b*vr*N : (b+1)*vr*N]
		assert.Less(t, csUnitaryErr(u, M, uc, false), tol*10, "UᴴU = I")
		assert.Less(t, csUnitaryErr(vh, vr, N, true), tol*10, "Vh Vhᴴ = I")
		// U[:, :K] diag(S) Vh[:K, :] = A.
		us := make([]complex128, M*K)
		for i := range M {
			for j := range K {
				us[i*K+j] = u[i*uc+j] * s[j]
			}
		}
		rec := csMul(us, vh[:K*N], M, K, N)
		assert.Less(t, csMaxDiff(rec, ab), tol*10*sc, "U S Vh = A")
	}
}

func TestSVDValsComplex(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, dt := range csDtypes {
		for _, sh := range [][2]int{{6, 4}, {4, 7}, {33, 33}} {
			t.Run(fmt.Sprintf("%v/%dx%d", dt, sh[0], sh[1]), func(t *testing.T) {
				M, N := sh[0], sh[1]
				a := csMatrices(rng, dt, "random", 3, M, N)
				x := cxUpload(t, m, dt, a, 3, M, N)
				outs := callOp(t, m, "svdvals", x, ops.Attrs{})
				require.Equal(t, dt.Real(), outs[0].Dtype())
				s := readBack(t, outs[0])
				K := min(M, N)
				for b := range 3 {
					want := csSingular(a[b*M*N:(b+1)*M*N], M, N)
					for i := range K {
						assert.InDelta(t, want[i], real(s[b*K+i]), linTol(dt.Real())*want[0], "S[%d][%d]", b, i)
					}
				}
			})
		}
	}
}

func TestEighComplex(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, dt := range csDtypes {
		for _, n := range []int{1, 2, 5, 16, 40} {
			t.Run(fmt.Sprintf("%v/%d", dt, n), func(t *testing.T) {
				const B = 2
				a := csMatrices(rng, dt, "herm", B, n, n)
				// Only the lower triangle is read: garbage above it, and
				// an imaginary diagonal, must not matter.
				in := make([]complex128, len(a))
				copy(in, a)
				for b := range B {
					for i := range n {
						in[b*n*n+i*n+i] += complex(0, 5)
						for j := i + 1; j < n; j++ {
							in[b*n*n+i*n+j] = complex(7, -3)
						}
					}
				}
				x := cxUpload(t, m, dt, in, B, n, n)
				outs := callOp(t, m, "eigh", x, ops.Attrs{})
				require.Equal(t, dt.Real(), outs[0].Dtype())
				require.Equal(t, dt, outs[1].Dtype())
				w, v := readBack(t, outs[0]), readBack(t, outs[1])
				vals := readBack(t, callOp(t, m, "eigvalsh", x, ops.Attrs{})[0])
				tol := linTol(dt.Real())
				for b := range B {
					ab := a[b*n*n : (b+1)*n*n]
					want := csEigvals(ab, n)
					sc := max(math.Abs(want[0]), math.Abs(want[n-1]), 1)
					vb := v[b*n*n : (b+1)*n*n]
					for i := range n {
						assert.InDelta(t, want[i], real(w[b*n+i]), tol*sc, "w[%d][%d]", b, i)
						assert.InDelta(t, want[i], real(vals[b*n+i]), tol*sc, "eigvalsh[%d][%d]", b, i)
					}
					assert.Less(t, csUnitaryErr(vb, n, n, false), tol*10, "VᴴV = I")
					av := csMul(ab, vb, n, n, n)
					vw := make([]complex128, n*n)
					for i := range n {
						for j := range n {
							vw[i*n+j] = vb[i*n+j] * w[b*n+j]
						}
					}
					assert.Less(t, csMaxDiff(av, vw), tol*10*sc, "A V = V diag(w)")
				}
			})
		}
	}
}

func TestPinvRankComplex(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, dt := range csDtypes {
		for _, tc := range []struct {
			kind string
			M, N int
			rank int
		}{{"random", 5, 3, 3}, {"random", 3, 6, 3}, {"rank1", 4, 5, 1}, {"random", 7, 7, 7}} {
			t.Run(fmt.Sprintf("%v/%s%dx%d", dt, tc.kind, tc.M, tc.N), func(t *testing.T) {
				M, N := tc.M, tc.N
				a := csMatrices(rng, dt, tc.kind, 2, M, N)
				x := cxUpload(t, m, dt, a, 2, M, N)
				po := callOp(t, m, "pinv", x, ops.Attrs{})[0]
				require.Equal(t, dt, po.Dtype())
				require.Equal(t, []int{2, N, M}, po.Shape())
				p := readBack(t, po)
				r, err := callOp(t, m, "matrix_rank", x, ops.Attrs{})[0].Int64s()
				require.NoError(t, err)
				assert.Equal(t, []int64{int64(tc.rank), int64(tc.rank)}, r)
				tol := linTol(dt.Real()) * 100
				for b := range 2 {
					ab, pb := a[b*M*N:(b+1)*M*N], p[b*N*M:(b+1)*N*M]
					// The Penrose conditions: A P A = A, P A P = P, A P and
					// P A Hermitian.
					ap := csMul(ab, pb, M, N, M)
					pa := csMul(pb, ab, N, M, N)
					assert.Less(t, csMaxDiff(csMul(ap, ab, M, M, N), ab), tol, "A P A = A")
					assert.Less(t, csMaxDiff(csMul(pa, pb, N, N, M), pb), tol*csNorm(pb), "P A P = P")
					assert.Less(t, csMaxDiff(ap, csH(ap, M, M)), tol, "A P Hermitian")
					assert.Less(t, csMaxDiff(pa, csH(pa, N, N)), tol, "P A Hermitian")
				}
			})
		}
	}
}

// csNorm is max(1, max |x|).
func csNorm(x []complex128) float64 {
	n := 1.0
	for _, v := range x {
		n = max(n, cmplx.Abs(v))
	}
	return n
}

func TestMatrixRankComplex(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(19, 20))
	for _, dt := range csDtypes {
		a := append(csMatrices(rng, dt, "rank1", 1, 4, 5), csMatrices(rng, dt, "random", 1, 4, 5)...)
		x := cxUpload(t, m, dt, a, 2, 4, 5)
		r, err := callOp(t, m, "matrix_rank", x, ops.Attrs{})[0].Int64s()
		require.NoError(t, err)
		assert.Equal(t, []int64{1, 4}, r, "%v", dt)
	}
}

func TestNormsComplex(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dt := range csDtypes {
		tol := linTol(dt.Real())
		const M, N = 6, 5
		a := csMatrices(rng, dt, "random", 2, M, N)
		// Parts near the overflow threshold: |z| must not overflow.
		big := 1e300
		if dt == tensor.Complex64 {
			big = 1e37
		}
		a[3] = complex(big, -big)
		x := cxUpload(t, m, dt, a, 2, M, N)
		for _, ord := range []string{"2", "1", "inf", "-inf", "0", "3", "-1.5"} {
			t.Run(fmt.Sprintf("vector/%v/%s", dt, ord), func(t *testing.T) {
				y := callOp(t, m, "vector_norm", x, ops.Attrs{Axes: []int{2}, Ord: ord})[0]
				require.Equal(t, dt.Real(), y.Dtype())
				got := readBack(t, y)
				o := parseOrd(ord)
				for r := range 2 * M {
					want := csVectorNorm(a[r*N:(r+1)*N], o)
					assert.InDelta(t, want, real(got[r]), tol*10*max(want, 1e-300), "row %d", r)
				}
			})
		}
		a[3] = complex(0.5, -0.25)
		x = cxUpload(t, m, dt, a, 2, M, N)
		for _, ord := range []string{"fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf"} {
			t.Run(fmt.Sprintf("matrix/%v/%s", dt, ord), func(t *testing.T) {
				y := callOp(t, m, "matrix_norm", x, ops.Attrs{Ord: ord})[0]
				require.Equal(t, dt.Real(), y.Dtype())
				got := readBack(t, y)
				for b := range 2 {
					want := csMatrixNorm(a[b*M*N:(b+1)*M*N], M, N, ord)
					assert.InDelta(t, want, real(got[b]), tol*10*want, "matrix %d", b)
				}
			})
		}
	}
}

func parseOrd(s string) float64 {
	switch s {
	case "inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	}
	var v float64
	_, _ = fmt.Sscan(s, &v)
	return v
}

// csVectorNorm is the ord-norm of v (scaled, so that big entries do not
// overflow).
func csVectorNorm(v []complex128, ord float64) float64 {
	abs := make([]float64, len(v))
	hi, lo := 0.0, math.Inf(1)
	for i, z := range v {
		abs[i] = cmplx.Abs(z)
		hi, lo = max(hi, abs[i]), min(lo, abs[i])
	}
	switch {
	case math.IsInf(ord, 1):
		return hi
	case math.IsInf(ord, -1):
		return lo
	case ord == 0:
		n := 0.0
		for _, x := range abs {
			if x != 0 {
				n++
			}
		}
		return n
	}
	sc := hi
	if ord < 0 {
		sc = lo
	}
	s := 0.0
	for _, x := range abs {
		s += math.Pow(x/sc, ord)
	}
	return sc * math.Pow(s, 1/ord)
}

// csMatrixNorm is the ord-norm of a (m×n).
func csMatrixNorm(a []complex128, m, n int, ord string) float64 {
	sv := csSingular(a, m, n)
	sums := func(rows bool) (float64, float64) {
		hi, lo := 0.0, math.Inf(1)
		outer, inner := n, m
		if rows {
			outer, inner = m, n
		}
		for o := range outer {
			s := 0.0
			for i := range inner {
				if rows {
					s += cmplx.Abs(a[o*n+i])
				} else {
					s += cmplx.Abs(a[i*n+o])
				}
			}
			hi, lo = max(hi, s), min(lo, s)
		}
		return hi, lo
	}
	switch ord {
	case "fro":
		s := 0.0
		for _, z := range a {
			s += real(z)*real(z) + imag(z)*imag(z)
		}
		return math.Sqrt(s)
	case "nuc":
		s := 0.0
		for _, v := range sv {
			s += v
		}
		return s
	case "2":
		return sv[0]
	case "-2":
		return sv[len(sv)-1]
	case "1", "-1":
		hi, lo := sums(false)
		if ord == "1" {
			return hi
		}
		return lo
	}
	hi, lo := sums(true)
	if ord == "inf" {
		return hi
	}
	return lo
}

// TestSVDComplexMutation checks that the tests above can fail: with the
// conjugate dropped from the complex rotation (jacobiHooks.mutate), the
// columns no longer become orthogonal and U S Vh is not A.
func TestSVDComplexMutation(t *testing.T) {
	m, _ := testutil.Manager(t)
	defer linalg.SetJacobiHooks(0, true)()
	rng := rand.New(rand.NewPCG(23, 24))
	const M, N = 6, 4
	a := csMatrices(rng, tensor.Complex128, "random", 1, M, N)
	x := cxUpload(t, m, tensor.Complex128, a, M, N)
	full := false
	outs := callOp(t, m, "svd", x, ops.Attrs{FullMatrices: &full})
	u, s, vh := readBack(t, outs[0]), readBack(t, outs[1]), readBack(t, outs[2])
	for i := range M {
		for j := range N {
			u[i*N+j] *= s[j]
		}
	}
	assert.Greater(t, csMaxDiff(csMul(u, vh, M, N, N), a), 1e-3, "the mutated rotation went unnoticed")
}

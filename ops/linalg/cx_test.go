package linalg_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/linalg"
	"github.com/vkflow/vkflow/tensor"
)

// Complex64 and complex128 in the factorizations and products, against
// complex128 references on the CPU.

var cxLinDtypes = []tensor.Dtype{tensor.Complex64, tensor.Complex128}

// cxLinCases: batch shape, n and loop budget (small: split steps).
var cxLinCases = []struct {
	batch  []int
	n      int
	budget int
}{
	{nil, 1, 0},
	{nil, 5, 0},
	{[]int{2, 3}, 7, 0},
	{[]int{2}, 40, 0},
	{[]int{3}, 20, 12},
}

func numelInts(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func shapeOf(batch []int, dims ...int) []int {
	return append(append([]int(nil), batch...), dims...)
}

func TestLinalgComplexSolveInvDet(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dt := range cxLinDtypes {
		for _, c := range cxLinCases {
			t.Run(fmt.Sprintf("%v/%v/n%d/b%d", dt, c.batch, c.n, c.budget), func(t *testing.T) {
				withBudget(t, c.budget)
				n, k, nb := c.n, 3, numelInts(c.batch)
				var a, b []complex128
				for range nb {
					// Random matrices (pivoting matters) and, for n > 5,
					// diagonally dominant ones (a bounded condition).
					if n <= 5 {
						a = append(a, cxRandMatrix(rng, dt, n, n)...)
					} else {
						a = append(a, cxWellConditioned(rng, dt, n)...)
					}
					b = append(b, cxRandMatrix(rng, dt, n, k)...)
				}
				at := cxUpload(t, m, dt, a, shapeOf(c.batch, n, n)...)
				bt := cxUpload(t, m, dt, b, shapeOf(c.batch, n, k)...)
				x, _ := cxCall(t, m, "solve", []*tensor.Tensor{at, bt}, ops.Attrs{})
				inv, _ := cxCall(t, m, "inv", []*tensor.Tensor{at}, ops.Attrs{})
				det, ddt := cxCall(t, m, "det", []*tensor.Tensor{at}, ops.Attrs{})
				sl, sdt := cxCall(t, m, "slogdet", []*tensor.Tensor{at}, ops.Attrs{})
				require.Equal(t, dt, ddt[0])
				require.Equal(t, []tensor.Dtype{dt, dt.Real()}, sdt, "slogdet: a complex sign, a real logabsdet")
				for i := range nb {
					ai := a[i*n*n : (i+1)*n*n]
					wx, wd := cxRefSolve(ai, b[i*n*k:(i+1)*n*k], n, k)
					winv, _ := cxRefSolve(ai, cxEye(n), n, n)
					cond := cxMaxAbs(winv) * cxMaxAbs(ai) * float64(n)
					tol := 50 * float64(n) * cxEps(dt) * cond
					cxRequireClose(t, wx, x[0][i*n*k:(i+1)*n*k], tol, "solve")
					gi := inv[0][i*n*n : (i+1)*n*n]
					cxRequireClose(t, winv, gi, tol, "inv")
					cxRequireClose(t, cxEye(n), cxMatmul(ai, gi, n, n, n), tol, "A·inv(A)")
					gd := det[0][i]
					if dt == tensor.Complex64 && cmplx.Abs(wd) > math.MaxFloat32 {
						require.True(t, cmplx.IsInf(gd) || cmplx.IsNaN(gd), "det overflows complex64: %v", gd)
					} else {
						require.LessOrEqual(t, cmplx.Abs(gd-wd), tol*cmplx.Abs(wd), "det %v, want %v", gd, wd)
					}
					sign, logabs := sl[0][i], sl[1][i]
					require.Zero(t, imag(logabs))
					require.InDelta(t, 1, cmplx.Abs(sign), 10*cxEps(dt), "|sign|")
					require.InDelta(t, math.Log(cmplx.Abs(wd)), real(logabs), tol, "logabsdet")
					require.LessOrEqual(t, cmplx.Abs(sign-wd/complex(cmplx.Abs(wd), 0)), tol, "sign %v, want %v", sign, wd/complex(cmplx.Abs(wd), 0))
				}
			})
		}
	}
}

// TestLinalgComplexSingular: a singular complex matrix's det is 0 and
// its slogdet (0, -inf); an empty one's 1 and (1, 0).
func TestLinalgComplexSingular(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range cxLinDtypes {
		s := cxUpload(t, m, dt, []complex128{1 + 1i, 2i, 1 + 1i, 2i}, 2, 2)
		det, _ := cxCall(t, m, "det", []*tensor.Tensor{s}, ops.Attrs{})
		require.Zero(t, cmplx.Abs(det[0][0]), dt)
		sl, _ := cxCall(t, m, "slogdet", []*tensor.Tensor{s}, ops.Attrs{})
		require.Equal(t, complex128(0), sl[0][0])
		require.True(t, math.IsInf(real(sl[1][0]), -1))
		e := cxUpload(t, m, dt, nil, 0, 0)
		det, _ = cxCall(t, m, "det", []*tensor.Tensor{e}, ops.Attrs{})
		require.Equal(t, []complex128{1}, det[0])
		sl, _ = cxCall(t, m, "slogdet", []*tensor.Tensor{e}, ops.Attrs{})
		require.Equal(t, []complex128{1}, sl[0])
		require.Equal(t, []complex128{0}, sl[1])
	}
}

func TestLinalgComplexCholesky(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, dt := range cxLinDtypes {
		for _, c := range cxLinCases {
			t.Run(fmt.Sprintf("%v/%v/n%d/b%d", dt, c.batch, c.n, c.budget), func(t *testing.T) {
				withBudget(t, c.budget)
				n, nb := c.n, numelInts(c.batch)
				var a, in []complex128
				for range nb {
					h := cxHPD(rng, dt, n)
					a = append(a, h...)
					// The upper triangle is not read: scribble on it.
					w := append([]complex128(nil), h...)
					for i := 0; i < n; i++ {
						for j := i + 1; j < n; j++ {
							w[i*n+j] = complex(99, -7)
						}
						w[i*n+i] = complex(real(w[i*n+i]), 5)
					}
					in = append(in, w...)
				}
				at := cxUpload(t, m, dt, in, shapeOf(c.batch, n, n)...)
				lo, _ := cxCall(t, m, "cholesky", []*tensor.Tensor{at}, ops.Attrs{})
				up, _ := cxCall(t, m, "cholesky", []*tensor.Tensor{at}, ops.Attrs{Upper: true})
				tol := 20 * float64(n) * cxEps(dt)
				for i := range nb {
					l := lo[0][i*n*n : (i+1)*n*n]
					u := up[0][i*n*n : (i+1)*n*n]
					for r := 0; r < n; r++ {
						require.Zero(t, imag(l[r*n+r]), "L's diagonal is real")
						require.Positive(t, real(l[r*n+r]), "L's diagonal is positive")
						for c := r + 1; c < n; c++ {
							require.Zero(t, l[r*n+c], "L above the diagonal")
						}
					}
					cxRequireClose(t, a[i*n*n:(i+1)*n*n], cxMatmul(l, cxAdjoint(l, n, n), n, n, n), tol, "L·Lᴴ")
					require.Equal(t, cxAdjoint(l, n, n), u, "upper is Lᴴ")
				}
			})
		}
	}
	// Not positive definite: NaN throughout.
	for _, dt := range cxLinDtypes {
		at := cxUpload(t, m, dt, []complex128{1, 0, 2 + 1i, 1}, 2, 2)
		l, _ := cxCall(t, m, "cholesky", []*tensor.Tensor{at}, ops.Attrs{})
		for _, v := range l[0] {
			require.True(t, cmplx.IsNaN(v), "%v", l[0])
		}
	}
}

func TestLinalgComplexQR(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(15, 16))
	shapes := []struct {
		batch  []int
		r, c   int
		budget int
	}{
		{nil, 1, 1, 0}, {nil, 5, 3, 0}, {nil, 3, 5, 0}, {[]int{2, 2}, 6, 6, 0},
		{[]int{2}, 40, 20, 0}, {[]int{3}, 20, 30, 70}, {nil, 4, 0, 0},
	}
	for _, dt := range cxLinDtypes {
		for _, s := range shapes {
			for _, mode := range []string{"reduced", "complete"} {
				t.Run(fmt.Sprintf("%v/%v/%dx%d/%s/b%d", dt, s.batch, s.r, s.c, mode, s.budget), func(t *testing.T) {
					withBudget(t, s.budget)
					nb, r, c := numelInts(s.batch), s.r, s.c
					var a []complex128
					for range nb {
						a = append(a, cxRandMatrix(rng, dt, r, c)...)
					}
					at := cxUpload(t, m, dt, a, shapeOf(s.batch, r, c)...)
					outs, _ := cxCall(t, m, "qr", []*tensor.Tensor{at}, ops.Attrs{Mode: mode})
					qc := min(r, c)
					if mode == "complete" {
						qc = r
					}
					require.Len(t, outs[0], nb*r*qc)
					require.Len(t, outs[1], nb*qc*c)
					tol := 30 * float64(max(r, c)) * cxEps(dt)
					for i := range nb {
						q := outs[0][i*r*qc : (i+1)*r*qc]
						rr := outs[1][i*qc*c : (i+1)*qc*c]
						cxRequireClose(t, a[i*r*c:(i+1)*r*c], cxMatmul(q, rr, r, qc, c), tol, "Q·R")
						cxRequireClose(t, cxEye(qc), cxMatmul(cxAdjoint(q, r, qc), q, qc, r, qc), tol, "QᴴQ")
						for x := range qc {
							if x < c {
								require.Zero(t, imag(rr[x*c+x]), "R's diagonal is real (LAPACK's convention)")
							}
							for y := range min(x, c) {
								require.Zero(t, rr[x*c+y], "R below the diagonal")
							}
						}
					}
				})
			}
		}
	}
}

func TestLinalgComplexProducts(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, dt := range cxLinDtypes {
		t.Run(dt.String(), func(t *testing.T) {
			tol := 20 * cxEps(dt)
			// vecdot over axis -1 of [4, 6] and [6]: sum(conj(a)·b).
			a := cxRandMatrix(rng, dt, 4, 6)
			b := cxRandMatrix(rng, dt, 1, 6)
			at, bt := cxUpload(t, m, dt, a, 4, 6), cxUpload(t, m, dt, b, 6)
			got, _ := cxCall(t, m, "vecdot", []*tensor.Tensor{at, bt}, ops.Attrs{})
			want := make([]complex128, 4)
			for i := range want {
				for l := range 6 {
					want[i] += cmplx.Conj(a[i*6+l]) * b[l]
				}
			}
			cxRequireClose(t, want, got[0], tol, "vecdot")
			// vecdot along axis 0, in chunks (several dispatches).
			func() {
				defer linalg.SetVecdotChunk(3)()
				got, _ := cxCall(t, m, "vecdot", []*tensor.Tensor{at, at}, ops.Attrs{Axes: []int{0}})
				for j := range 6 {
					var w complex128
					for i := range 4 {
						w += cmplx.Conj(a[i*6+j]) * a[i*6+j]
					}
					require.InDelta(t, real(w), real(got[0][j]), tol*real(w))
					require.Zero(t, imag(got[0][j]), "vecdot(x, x) is real")
				}
			}()
			// outer of [4] and [6].
			got, _ = cxCall(t, m, "outer", []*tensor.Tensor{cxUpload(t, m, dt, a[:4], 4), bt}, ops.Attrs{})
			want = cxMatmul(a[:4], b, 4, 1, 6)
			cxRequireClose(t, want, got[0], tol, "outer")
			// cross of [2, 3] rows.
			x, y := cxRandMatrix(rng, dt, 2, 3), cxRandMatrix(rng, dt, 2, 3)
			got, _ = cxCall(t, m, "cross", []*tensor.Tensor{cxUpload(t, m, dt, x, 2, 3), cxUpload(t, m, dt, y, 2, 3)}, ops.Attrs{})
			want = nil
			for r := range 2 {
				u, v := x[r*3:r*3+3], y[r*3:r*3+3]
				want = append(want, u[1]*v[2]-u[2]*v[1], u[2]*v[0]-u[0]*v[2], u[0]*v[1]-u[1]*v[0])
			}
			cxRequireClose(t, want, got[0], tol, "cross")
			// diagonal and trace, offset 1, of [2, 3, 4].
			d := cxRandMatrix(rng, dt, 6, 4)
			dtn := cxUpload(t, m, dt, d, 2, 3, 4)
			got, _ = cxCall(t, m, "diagonal", []*tensor.Tensor{dtn}, ops.Attrs{Offset: 1})
			tr, trdt := cxCall(t, m, "trace", []*tensor.Tensor{dtn}, ops.Attrs{Offset: 1})
			require.Equal(t, dt, trdt[0])
			var wd, wt []complex128
			for bb := range 2 {
				var s complex128
				for i := range 3 {
					v := d[bb*12+i*4+i+1]
					wd = append(wd, v)
					s += v
				}
				wt = append(wt, s)
			}
			require.Equal(t, wd, got[0], "diagonal")
			cxRequireClose(t, wt, tr[0], tol, "trace")
			// tensordot of [2, 3, 4] and [3, 4, 5] over two axes.
			p, q := cxRandMatrix(rng, dt, 2, 12), cxRandMatrix(rng, dt, 12, 5)
			got, _ = cxCall(t, m, "tensordot", []*tensor.Tensor{cxUpload(t, m, dt, p, 2, 3, 4), cxUpload(t, m, dt, q, 3, 4, 5)},
				ops.Attrs{Axes: []int{1, 2}, Axes2: []int{0, 1}})
			cxRequireClose(t, cxMatmul(p, q, 2, 12, 5), got[0], 10*tol, "tensordot")
			// matrix_power 0, 3 and -2 of a well-conditioned 4×4.
			w := cxWellConditioned(rng, dt, 4)
			wt4 := cxUpload(t, m, dt, w, 4, 4)
			for _, c := range []struct {
				n    int
				want []complex128
			}{
				{0, cxEye(4)},
				{3, cxMatmul(cxMatmul(w, w, 4, 4, 4), w, 4, 4, 4)},
			} {
				got, _ = cxCall(t, m, "matrix_power", []*tensor.Tensor{wt4}, ops.Attrs{N: c.n})
				cxRequireClose(t, c.want, got[0], 50*tol, fmt.Sprintf("matrix_power %d", c.n))
			}
			got, _ = cxCall(t, m, "matrix_power", []*tensor.Tensor{wt4}, ops.Attrs{N: -2})
			cxRequireClose(t, cxEye(4), cxMatmul(cxMatmul(w, w, 4, 4, 4), got[0], 4, 4, 4), 200*tol, "w²·matrix_power(w, -2)")
		})
	}
}

// TestLinalgComplexGather: complex128 elements (16 bytes) move whole in
// the strided gather (transpose with a general permutation, diagonal,
// tensordot's packing).
func TestLinalgComplexGather(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(19, 20))
	for _, dt := range cxLinDtypes {
		x := cxRandMatrix(rng, dt, 6, 5)
		xt := cxUpload(t, m, dt, x, 2, 3, 5)
		got, _ := cxCall(t, m, "transpose", []*tensor.Tensor{xt}, ops.Attrs{Perm: []int{2, 0, 1}})
		var want []complex128
		for k := range 5 {
			for i := range 2 {
				for j := range 3 {
					want = append(want, x[i*15+j*5+k])
				}
			}
		}
		require.Equal(t, want, got[0], dt)
	}
}

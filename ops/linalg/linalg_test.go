package linalg_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/linalg"
	"github.com/vkflow/vkflow/tensor"
)

// linCases are the matrix stacks of the factorization tests: batch shape
// and n; budget, when set, is the loop budget (small: the steps split
// into several dispatches, and fused runs of several steps).
var linCases = []struct {
	batch  []int
	n      int
	budget int
}{
	{nil, 1, 0},
	{nil, 5, 0},
	{[]int{3}, 4, 0},
	{[]int{2, 3}, 7, 0},
	{[]int{2}, 33, 0},
	{[]int{2}, 90, 0},
	{[]int{3}, 20, 12},
	{[]int{2}, 70, 40},
}

func withBudget(t *testing.T, b int) {
	if b > 0 {
		t.Cleanup(linalg.SetLinBudget(b))
	}
}

func TestLinalgSolveInvDet(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, c := range linCases {
			t.Run(fmt.Sprintf("%v/%v/n%d/b%d", dt, c.batch, c.n, c.budget), func(t *testing.T) {
				withBudget(t, c.budget)
				n, k := c.n, 3
				nb := 1
				for _, d := range c.batch {
					nb *= d
				}
				a := linRandom(rng, dt, nb*n*n)
				b := linRandom(rng, dt, nb*n*k)
				ashape := append(append([]int(nil), c.batch...), n, n)
				bshape := append(append([]int(nil), c.batch...), n, k)
				at, bt := linTensor(t, m, dt, a, ashape), linTensor(t, m, dt, b, bshape)
				x := linCall(t, m, "solve", []*tensor.Tensor{at, bt}, ops.Attrs{})[0]
				inv := linCall(t, m, "inv", []*tensor.Tensor{at}, ops.Attrs{})[0]
				det := linCall(t, m, "det", []*tensor.Tensor{at}, ops.Attrs{})[0]
				sl := linCall(t, m, "slogdet", []*tensor.Tensor{at}, ops.Attrs{})
				eye := make([]float64, n*n)
				for i := range n {
					eye[i*n+i] = 1
				}
				for i := range nb {
					ai := a[i*n*n : (i+1)*n*n]
					wx, wd := refSolve(ai, b[i*n*k:(i+1)*n*k], n, k)
					winv, _ := refSolve(ai, eye, n, n)
					// Random matrices: the error bound is eps · cond, cond up to ~1e3.
					tol := 2e4 * float64(n) * linEps(dt) * maxAbs(winv)
					requireClose(t, wx, x[i*n*k:(i+1)*n*k], tol, "solve")
					requireClose(t, winv, inv[i*n*n:(i+1)*n*n], tol, "inv")
					if dt == tensor.Float32 && math.Abs(wd) > math.MaxFloat32 {
						require.True(t, math.IsInf(det[i], 0), "det overflows float32: %v", det[i])
					} else {
						require.InEpsilon(t, wd, det[i], 1e3*float64(n)*linEps(dt)*maxAbs(winv), "det")
					}
					require.Equal(t, math.Copysign(1, wd), sl[0][i], "slogdet sign")
					require.InDelta(t, math.Log(math.Abs(wd)), sl[1][i], 1e3*float64(n)*linEps(dt)*maxAbs(winv), "logabsdet")
				}
			})
		}
	}
}

func TestLinalgSolveBroadcast(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(3, 4))
	dt := tensor.Float64
	n := 4
	a := linRandom(rng, dt, 2*n*n)
	b := linRandom(rng, dt, 3*n*2)
	at := linTensor(t, m, dt, a, []int{2, 1, n, n})
	bt := linTensor(t, m, dt, b, []int{3, n, 2})
	x := linCall(t, m, "solve", []*tensor.Tensor{at, bt}, ops.Attrs{})[0]
	require.Len(t, x, 2*3*n*2)
	for i := range 2 {
		for j := range 3 {
			w, _ := refSolve(a[i*n*n:(i+1)*n*n], b[j*n*2:(j+1)*n*2], n, 2)
			o := (i*3 + j) * n * 2
			requireClose(t, w, x[o:o+n*2], 1e-10, "solve")
		}
	}
	// A 1-D b is a vector: x [2, 1, n].
	v := linRandom(rng, dt, n)
	vt := linTensor(t, m, dt, v, []int{n})
	outs, err := ops.Call(t.Context(), m, "solve", []*tensor.Tensor{at, vt}, nil, ops.Attrs{})
	require.NoError(t, err)
	require.Equal(t, []int{2, 1, n}, outs[0].Shape())
	got := linRead(t, outs[0])
	for i := range 2 {
		w, _ := refSolve(a[i*n*n:(i+1)*n*n], v, n, 1)
		requireClose(t, w, got[i*n:(i+1)*n], 1e-10, "solve vector")
	}
}

func TestLinalgSingularEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		// Exactly singular: elimination gives a zero pivot.
		at := linTensor(t, m, dt, []float64{1, 2, 2, 4, 0, 0, 0, 0}, []int{2, 2, 2})
		require.Equal(t, []float64{0, 0}, linCall(t, m, "det", []*tensor.Tensor{at}, ops.Attrs{})[0])
		sl := linCall(t, m, "slogdet", []*tensor.Tensor{at}, ops.Attrs{})
		require.Equal(t, []float64{0, 0}, sl[0])
		require.Equal(t, []float64{math.Inf(-1), math.Inf(-1)}, sl[1])
		inv := linCall(t, m, "inv", []*tensor.Tensor{at}, ops.Attrs{})[0]
		for _, v := range inv {
			require.True(t, math.IsNaN(v) || math.IsInf(v, 0), "inverse of a singular matrix: %v", inv)
		}
		// Empty matrices: det 1, slogdet (1, 0); an empty batch: empty.
		e := linTensor(t, m, dt, nil, []int{3, 0, 0})
		require.Equal(t, []float64{1, 1, 1}, linCall(t, m, "det", []*tensor.Tensor{e}, ops.Attrs{})[0])
		sl = linCall(t, m, "slogdet", []*tensor.Tensor{e}, ops.Attrs{})
		require.Equal(t, []float64{1, 1, 1}, sl[0])
		require.Equal(t, []float64{0, 0, 0}, sl[1])
		eb := linTensor(t, m, dt, nil, []int{0, 3, 3})
		for _, name := range []string{"det", "inv", "cholesky"} {
			require.Empty(t, linCall(t, m, name, []*tensor.Tensor{eb}, ops.Attrs{})[0], name)
		}
		require.Empty(t, linCall(t, m, "inv", []*tensor.Tensor{e}, ops.Attrs{})[0])
	}
}

func TestLinalgErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	f32 := linTensor(t, m, tensor.Float32, make([]float64, 6), []int{2, 3})
	sq := linTensor(t, m, tensor.Float32, make([]float64, 4), []int{2, 2})
	i32 := linTensor(t, m, tensor.Int32, make([]float64, 4), []int{2, 2})
	f64 := linTensor(t, m, tensor.Float64, make([]float64, 4), []int{2, 2})
	v := linTensor(t, m, tensor.Float32, make([]float64, 3), []int{3})
	for _, c := range []struct {
		name string
		in   []*tensor.Tensor
		at   ops.Attrs
	}{
		{"inv", []*tensor.Tensor{f32}, ops.Attrs{}},
		{"det", []*tensor.Tensor{v}, ops.Attrs{}},
		{"cholesky", []*tensor.Tensor{i32}, ops.Attrs{}},
		{"solve", []*tensor.Tensor{sq, f64}, ops.Attrs{}},
		{"solve", []*tensor.Tensor{sq, v}, ops.Attrs{}},
		{"qr", []*tensor.Tensor{f32}, ops.Attrs{Mode: "r"}},
		{"qr", []*tensor.Tensor{v}, ops.Attrs{}},
	} {
		_, err := ops.Call(t.Context(), m, c.name, c.in, nil, c.at)
		require.ErrorIs(t, err, core.ErrInvalid, c.name)
	}
}

func TestLinalgCholesky(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, c := range linCases {
			t.Run(fmt.Sprintf("%v/%v/n%d/b%d", dt, c.batch, c.n, c.budget), func(t *testing.T) {
				withBudget(t, c.budget)
				n := c.n
				nb := 1
				for _, d := range c.batch {
					nb *= d
				}
				var a []float64
				for range nb {
					a = append(a, spd(rng, dt, n)...)
				}
				at := linTensor(t, m, dt, a, append(append([]int(nil), c.batch...), n, n))
				lo := linCall(t, m, "cholesky", []*tensor.Tensor{at}, ops.Attrs{})[0]
				up := linCall(t, m, "cholesky", []*tensor.Tensor{at}, ops.Attrs{Upper: true})[0]
				for i := range nb {
					w := refCholesky(a[i*n*n:(i+1)*n*n], n)
					requireClose(t, w, lo[i*n*n:(i+1)*n*n], 50*float64(n)*linEps(dt), "L")
					requireClose(t, refT(w, n, n), up[i*n*n:(i+1)*n*n], 50*float64(n)*linEps(dt), "U")
				}
			})
		}
	}
	// Not positive definite: NaN throughout that matrix only.
	at := linTensor(t, m, tensor.Float32, []float64{4, 2, 2, 5, 1, 2, 2, 1}, []int{2, 2, 2})
	got := linCall(t, m, "cholesky", []*tensor.Tensor{at}, ops.Attrs{})[0]
	require.Equal(t, []float64{2, 0, 1, 2}, got[:4])
	for _, v := range got[4:] {
		require.True(t, math.IsNaN(v))
	}
}

func TestLinalgQR(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(7, 8))
	shapes := []struct {
		batch  []int
		r, c   int
		budget int
	}{
		{nil, 1, 1, 0}, {nil, 5, 3, 0}, {nil, 3, 5, 0}, {[]int{2, 2}, 6, 6, 0},
		{[]int{2}, 80, 40, 0}, {[]int{3}, 30, 100, 70}, {nil, 4, 0, 0}, {nil, 0, 3, 0},
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, s := range shapes {
			for _, mode := range []string{"reduced", "complete"} {
				t.Run(fmt.Sprintf("%v/%v/%dx%d/%s/b%d", dt, s.batch, s.r, s.c, mode, s.budget), func(t *testing.T) {
					withBudget(t, s.budget)
					nb := 1
					for _, d := range s.batch {
						nb *= d
					}
					r, c := s.r, s.c
					a := linRandom(rng, dt, nb*r*c)
					at := linTensor(t, m, dt, a, append(append([]int(nil), s.batch...), r, c))
					outs := linCall(t, m, "qr", []*tensor.Tensor{at}, ops.Attrs{Mode: mode})
					k := min(r, c)
					qc := k
					if mode == "complete" {
						qc = r
					}
					require.Len(t, outs[0], nb*r*qc)
					require.Len(t, outs[1], nb*qc*c)
					tol := 30 * float64(max(r, c)) * linEps(dt)
					for i := range nb {
						q := outs[0][i*r*qc : (i+1)*r*qc]
						rr := outs[1][i*qc*c : (i+1)*qc*c]
						requireClose(t, a[i*r*c:(i+1)*r*c], linMatmul(q, rr, r, qc, c), tol, "Q·R")
						eye := make([]float64, qc*qc)
						for j := range qc {
							eye[j*qc+j] = 1
						}
						requireClose(t, eye, linMatmul(refT(q, r, qc), q, qc, r, qc), tol, "QᵀQ")
						for x := range qc {
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

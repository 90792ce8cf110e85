package opcore_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// softmaxRef computes softmax along axis (non-negative) in float64 with
// the stable formula, so special values come out as the op documents:
// exp(x - max) / sum(exp(x - max)). It also returns, per element, the
// |x - max| of its row's largest such value (exp's error grows with it).
func softmaxRef(h host, axis int) (y []float64, spread []float64) {
	shape := h.shape
	if len(shape) == 0 {
		shape = []int{1}
	}
	n := shape[axis]
	inner := numelOf(shape[axis+1:])
	outer := numelOf(shape[:axis])
	y = make([]float64, len(h.f))
	spread = make([]float64, len(h.f))
	for u := range outer {
		for v := range inner {
			at := func(k int) int { return (u*n+k)*inner + v }
			m := math.Inf(-1)
			for k := range n {
				if x := h.f[at(k)]; x > m || math.IsNaN(x) {
					m = x
				}
				if math.IsNaN(m) {
					break
				}
			}
			var s, sp float64
			for k := range n {
				e := math.Exp(h.f[at(k)] - m)
				y[at(k)] = e
				s += e
				if d := math.Abs(h.f[at(k)] - m); d > sp && !math.IsInf(d, 0) {
					sp = d
				}
			}
			for k := range n {
				y[at(k)] /= s
				spread[at(k)] = sp
			}
		}
	}
	for k := range y {
		y[k] = roundTo(h.dt, y[k])
	}
	return y, spread
}

// softmaxMismatches compares got with the reference. Each exp may be off
// by 3 + 2|x - max| ulp (the Vulkan precision of exp; float64 uses a
// polynomial of a few ulp, bounded the same way); the row sum adds
// depth(n) roundings; the division one. So the relative bound is
// 2*(3 + 2*spread) + depth(n) + 1 units, plus, for float16, one float16
// ulp for the rounding at the end, plus the smallest normal (tiny):
// subnormal results may flush to zero.
func softmaxMismatches(h host, axis int, got []float64) []string {
	want, spread := softmaxRef(h, axis)
	n := 1
	if len(h.shape) > 0 {
		n = h.shape[axis]
	}
	u := unit(h.dt)
	var bad []string
	for k, w := range want {
		g := got[k]
		tol := (2*(3+2*spread[k]) + depth(n) + 1) * u * math.Abs(w)
		if h.dt == tensor.Float16 {
			tol += math.Abs(w) * 0x1p-10
		}
		tol += tiny(h.dt)
		ok := math.Abs(g-w) <= tol || (math.IsNaN(w) && math.IsNaN(g))
		if !ok && len(bad) < 10 {
			bad = append(bad, fmt.Sprintf("element %d: got %v, want %v (tolerance %g)", k, g, w, tol))
		}
	}
	return bad
}

func runSoftmax(t *testing.T, m ops.Owner, x *tensor.Tensor, axis int) host {
	t.Helper()
	op, err := ops.Softmax(m, x, axis, nil)
	require.NoError(t, err)
	defer func() {
		assert.NoError(t, op.Close())
		assert.NoError(t, op.Out().Close())
	}()
	require.NoError(t, op.Run(context.Background()))
	return downloadHost(t, op.Out())
}

func TestSoftmax(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, tc := range []struct {
		shape []int
		axes  []int
	}{
		{[]int{5, 7}, []int{-1, 0}},
		{[]int{3, 4, 5}, []int{0, 1, 2}},
		{[]int{1}, []int{0}},
		{[]int{4097}, []int{0}},
		{[]int{3, 20000}, []int{1}},
		{[]int{20000, 3}, []int{0}},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float16, tensor.Float64} {
			h := randomHost(dt, tc.shape, uint64(len(tc.shape)))
			for k := range h.f {
				h.f[k] = roundTo(dt, 8*h.f[k]) // spread of up to 16
			}
			x := upload(t, m, h)
			for _, axis := range tc.axes {
				t.Run(fmt.Sprintf("%v/%v/axis%d", dt, tc.shape, axis), func(t *testing.T) {
					got := runSoftmax(t, m, x, axis)
					assert.Equal(t, h.shape, got.shape)
					assert.Equal(t, dt, got.dt)
					a := axis
					if a < 0 {
						a += len(tc.shape)
					}
					assert.Empty(t, softmaxMismatches(h, a, got.f))
				})
			}
		}
	}
}

func TestSoftmaxSpecial(t *testing.T) {
	m, _ := testutil.Manager(t)
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		row  []float64
		want []float64 // nil: compare with the reference only
	}{
		{"nan", []float64{1, 2, nan}, []float64{nan, nan, nan}},
		{"+inf", []float64{1, inf, 2}, []float64{nan, nan, nan}},
		{"two +inf", []float64{inf, inf}, []float64{nan, nan}},
		{"all -inf", []float64{-inf, -inf}, []float64{nan, nan}},
		{"-inf entries", []float64{-inf, 0, -inf, 0}, []float64{0, 0.5, 0, 0.5}},
		{"large", []float64{1000, 1000}, []float64{0.5, 0.5}},
		{"very negative", []float64{-1000, -1000, -1000, -1000}, []float64{0.25, 0.25, 0.25, 0.25}},
		{"stable", []float64{100, 0}, nil},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64, tensor.Float16} {
			if dt == tensor.Float16 && slices.ContainsFunc(tc.row, func(v float64) bool { return math.Abs(v) >= 1000 }) {
				continue // out of float16's range
			}
			t.Run(fmt.Sprintf("%s/%v", tc.name, dt), func(t *testing.T) {
				// Two rows: the special one and an ordinary one, which
				// must not be affected.
				n := len(tc.row)
				h := host{dt: dt, shape: []int{2, n}, f: append(slices.Clone(tc.row), make([]float64, n)...)}
				got := runSoftmax(t, m, upload(t, m, h), -1)
				assert.Empty(t, softmaxMismatches(h, 1, got.f))
				for k, w := range tc.want {
					if math.IsNaN(w) {
						assert.True(t, math.IsNaN(got.f[k]), "element %d: got %v, want NaN", k, got.f[k])
					} else {
						assert.InDelta(t, w, got.f[k], 1e-3, "element %d", k)
					}
				}
				for k := range n {
					assert.InDelta(t, 1/float64(n), got.f[n+k], 1e-3, "ordinary row")
				}
			})
		}
	}
}

func TestSoftmaxZeroD(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{})
	require.NoError(t, err)
	defer x.Close()
	require.NoError(t, tensor.Write(x, []float32{42}))
	for _, axis := range []int{0, -1} {
		got := runSoftmax(t, m, x, axis)
		assert.Equal(t, []int{}, got.shape)
		assert.Equal(t, []float64{1}, got.f)
	}
	_, err = ops.Softmax(m, x, 1, nil)
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
}

func TestSoftmaxEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{0, 3})
	require.NoError(t, err)
	defer x.Close()
	for _, axis := range []int{0, 1} {
		op, err := ops.Softmax(m, x, axis, nil)
		require.NoError(t, err)
		assert.Equal(t, 0, op.Dispatches())
		assert.Equal(t, []int{0, 3}, op.Out().Shape())
		require.NoError(t, op.Run(context.Background()))
		require.NoError(t, op.Close())
		require.NoError(t, op.Out().Close())
	}
}

func TestSoftmaxErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{4, 5})
	require.NoError(t, err)
	defer x.Close()
	xi, err := tensor.New(m, tensor.Int32, []int{4, 5})
	require.NoError(t, err)
	defer xi.Close()
	wrong, err := tensor.New(m, tensor.Float32, []int{5, 4})
	require.NoError(t, err)
	defer wrong.Close()
	wrongDt, err := tensor.New(m, tensor.Float64, []int{4, 5})
	require.NoError(t, err)
	defer wrongDt.Close()
	for _, tc := range []struct {
		name string
		f    func() (*ops.Op, error)
		msg  string
	}{
		{"int", func() (*ops.Op, error) { return ops.Softmax(m, xi, -1, nil) }, "int32"},
		{"axis", func() (*ops.Op, error) { return ops.Softmax(m, x, 2, nil) }, "axis 2"},
		{"negative axis", func() (*ops.Op, error) { return ops.Softmax(m, x, -3, nil) }, "axis -3"},
		{"out shape", func() (*ops.Op, error) { return ops.Softmax(m, x, 0, wrong) }, "shape [5 4]"},
		{"out dtype", func() (*ops.Op, error) { return ops.Softmax(m, x, 0, wrongDt) }, "float64"},
		{"in place", func() (*ops.Op, error) { return ops.Softmax(m, x, 0, x) }, "in place"},
		{"two axes", func() (*ops.Op, error) {
			return ops.Prepare(m, "softmax", []*tensor.Tensor{x}, nil, ops.Attrs{Axes: []int{0, 1}})
		}, "one axis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := tc.f()
			assert.Nil(t, op)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestSoftmaxMutations shows the softmax checks notice a broken pass
// structure: rows of 20000 need two passes for the max and two for the
// sum.
func TestSoftmaxMutations(t *testing.T) {
	m, _ := testutil.Manager(t)
	h := randomHost(tensor.Float32, []int{3, 20000}, 8)
	for r := range 3 {
		h.f[r*20000+19999] = 4 // the maxima come last
	}
	x := upload(t, m, h)
	op, err := ops.Softmax(m, x, 1, nil)
	require.NoError(t, err)
	assert.Equal(t, 5, op.Dispatches(), "max: 2 passes, sum of exp: 2 passes, divide: 1")
	require.NoError(t, op.Close())
	require.NoError(t, op.Out().Close())
	for _, mut := range []struct {
		name              string
		skipLast, onePass bool
	}{{"skip last pass", true, false}, {"one pass", false, true}} {
		t.Run(mut.name, func(t *testing.T) {
			defer opcore.SetReduceHooks(opcore.ReduceHooks{SkipLast: mut.skipLast, OnePass: mut.onePass})()
			got := runSoftmax(t, m, x, 1)
			assert.NotEmpty(t, softmaxMismatches(h, 1, got.f), "the mutation went unnoticed")
		})
	}
}

// TestSoftmaxComposes feeds a sum of rows into a softmax, in a graph and
// in a sequence, and checks the registry's "softmax".
func TestSoftmaxComposes(t *testing.T) {
	m, _ := testutil.Manager(t)
	h := randomHost(tensor.Float32, []int{4, 6, 5}, 12)
	x := upload(t, m, h)
	sum, err := ops.Sum(m, x, []int{2}, false, nil)
	require.NoError(t, err)
	defer sum.Out().Close()
	defer sum.Close()
	sm, err := ops.Softmax(m, sum.Out(), 0, nil)
	require.NoError(t, err)
	defer sm.Out().Close()
	defer sm.Close()
	check := func(t *testing.T, sums, ys []float32) {
		hs := host{dt: tensor.Float32, shape: []int{4, 6}, f: convNum[float64](sums)}
		assert.Empty(t, compare("sum", hs, reference("sum", h, []int{2}, false)))
		assert.Empty(t, softmaxMismatches(hs, 0, convNum[float64](ys)))
	}
	t.Run("graph", func(t *testing.T) {
		g, err := graph.New(m)
		require.NoError(t, err)
		sum.AddTo(g)
		sm.AddTo(g)
		sums, ys := make([]float32, 24), make([]float32, 24)
		g.Download(sum.Out(), sums)
		g.Download(sm.Out(), ys)
		e, err := g.Compile()
		require.NoError(t, err)
		defer e.Close()
		require.NoError(t, e.Run(context.Background()))
		check(t, sums, ys)
	})
	t.Run("sequence", func(t *testing.T) {
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, sm.Record(sum.Record(s)).SyncLocal(sum.Out(), sm.Out()).Eval(context.Background()))
		sums, err := sum.Out().Float32s()
		require.NoError(t, err)
		ys, err := sm.Out().Float32s()
		require.NoError(t, err)
		check(t, sums, ys)
	})
	t.Run("registry", func(t *testing.T) {
		outs, err := ops.Call(context.Background(), m, "softmax", []*tensor.Tensor{x}, nil, ops.Attrs{Axes: []int{1}})
		require.NoError(t, err)
		got := downloadHost(t, outs[0])
		require.NoError(t, outs[0].Close())
		assert.Empty(t, softmaxMismatches(h, 1, got.f))
		outs, err = ops.Call(context.Background(), m, "softmax", []*tensor.Tensor{x}, nil, ops.Attrs{})
		require.NoError(t, err)
		got = downloadHost(t, outs[0])
		require.NoError(t, outs[0].Close())
		assert.Empty(t, softmaxMismatches(h, 2, got.f))
	})
}

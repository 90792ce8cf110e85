package opcore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/ops/internal/opstest"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// refMatmul is NumPy's matmul in float64: the result, its shape, and per
// element the sum of |a||b| over its products (for the error bound).
func refMatmul(a []float64, as []int, b []float64, bs []int) (out, mag []float64, shape []int) {
	pa, pb := as, bs
	if len(as) == 1 {
		pa = []int{1, as[0]}
	}
	if len(bs) == 1 {
		pb = []int{bs[0], 1}
	}
	m, k, n := pa[len(pa)-2], pa[len(pa)-1], pb[len(pb)-1]
	ba, bb := pa[:len(pa)-2], pb[:len(pb)-2]
	rank := max(len(ba), len(bb))
	batch := make([]int, rank)
	dim := func(s []int, i int) int { // dimension i of rank-aligned s, 1 where missing
		if j := i - (rank - len(s)); j >= 0 {
			return s[j]
		}
		return 1
	}
	nb := 1
	for i := range batch {
		batch[i] = dim(ba, i) // broadcasting: a 1 stretches (to 0 too)
		if batch[i] == 1 {
			batch[i] = dim(bb, i)
		}
		nb *= batch[i]
	}
	out = make([]float64, nb*m*n)
	mag = make([]float64, nb*m*n)
	for z := range nb {
		// the batch index of a and of b
		za, zb, r, sa, sb := 0, 0, z, 1, 1
		for i := rank - 1; i >= 0; i-- {
			idx := r % batch[i]
			r /= batch[i]
			if dim(ba, i) != 1 {
				za += idx * sa
			}
			if dim(bb, i) != 1 {
				zb += idx * sb
			}
			sa *= dim(ba, i)
			sb *= dim(bb, i)
		}
		for i := range m {
			for j := range n {
				var s, g float64
				for l := range k {
					x, y := a[za*m*k+i*k+l], b[zb*k*n+l*n+j]
					s += x * y
					g += math.Abs(x * y)
				}
				out[z*m*n+i*n+j], mag[z*m*n+i*n+j] = s, g
			}
		}
	}
	shape = append([]int{}, batch...)
	if len(as) > 1 {
		shape = append(shape, m)
	}
	if len(bs) > 1 {
		shape = append(shape, n)
	}
	return out, mag, shape
}

// matmulTol is the error allowed for one output of a k-term dot product
// whose |products| sum to mag, in dtype dt: the classic bound (k+2)·u·mag
// for a sum in a floating-point type of unit roundoff u, and for float16
// (summed in float32) one more rounding to float16 of the result.
// Integers are exact (after wrapping).
func matmulTol(dt tensor.Dtype, k int, want, mag float64) float64 {
	kk := float64(k + 2)
	switch dt {
	case tensor.Float16:
		return 0x1p-11*math.Abs(want) + kk*0x1p-24*mag + 0x1p-24
	case tensor.Float32:
		return kk * 0x1p-24 * mag
	case tensor.Float64:
		return kk * 0x1p-53 * mag
	}
	return 0
}

// checkClose compares got to want within matmulTol, reporting only the
// first difference.
func checkClose(t *testing.T, dt tensor.Dtype, k int, got, want, mag []float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w := want[i]
		if !isFloatDtype(dt) {
			w = wrap(dt, w)
		}
		if math.IsNaN(w) || math.IsInf(w, 0) {
			if !(math.IsNaN(w) && math.IsNaN(got[i])) && got[i] != w {
				assert.Failf(t, "wrong element", "element %d of %d is %v, want %v", i, len(want), got[i], w)
				return
			}
			continue
		}
		if d := math.Abs(got[i] - w); !(d <= matmulTol(dt, k, w, mag[i])) {
			assert.Failf(t, "wrong element", "element %d of %d is %v, want %v (error %g, bound %g)", i, len(want), got[i], w, d, matmulTol(dt, k, w, mag[i]))
			return
		}
	}
}

func isFloatDtype(dt tensor.Dtype) bool {
	return dt == tensor.Float16 || dt == tensor.Float32 || dt == tensor.Float64
}

// runMatmul computes a @ b on the GPU with prepare and checks it against
// refMatmul.
func runMatmul(t *testing.T, m *vkflow.Manager, rng *rand.Rand, dt tensor.Dtype, as, bs []int,
	prepare func(ops.Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*ops.Op, error)) {
	t.Helper()
	av, bv := linRandom(rng, dt, numel(as)), linRandom(rng, dt, numel(bs))
	want, mag, shape := refMatmul(av, as, bv, bs)
	a, b := linTensor(t, m, dt, av, as), linTensor(t, m, dt, bv, bs)
	op, err := prepare(m, a, b, nil)
	require.NoError(t, err)
	defer func() { assert.NoError(t, op.Close()) }()
	c := op.Out()
	defer func() { assert.NoError(t, c.Close()) }()
	assert.Equal(t, shape, c.Shape())
	require.NoError(t, op.Run(context.Background()))
	k := as[len(as)-1]
	checkClose(t, dt, k, linRead(t, c), want, mag)
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func TestMatmul(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(11, 12))
	type tc struct {
		dt     tensor.Dtype
		as, bs []int
	}
	var cases []tc
	// 2-D float32 over odd sizes and tile edges, k up to 4097.
	for _, s := range [][3]int{
		{1, 1, 1}, {3, 17, 5}, {17, 3, 1}, {1, 1000, 1}, {64, 16, 64}, {65, 33, 127},
		{1023, 17, 3}, {3, 1023, 1000}, {5, 4097, 7}, {130, 257, 129},
	} {
		cases = append(cases, tc{tensor.Float32, []int{s[0], s[1]}, []int{s[1], s[2]}})
	}
	cases = append(cases, tc{tensor.Float16, []int{65, 4097}, []int{4097, 67}})
	for _, dt := range []tensor.Dtype{tensor.Float16, tensor.Float64, tensor.Int32, tensor.Int8} {
		for _, s := range [][3]int{{3, 17, 5}, {65, 300, 67}} {
			cases = append(cases, tc{dt, []int{s[0], s[1]}, []int{s[1], s[2]}})
		}
	}
	// Batches, broadcast, and 1-D operands.
	for _, s := range [][2][]int{
		{{2, 1, 3, 4}, {5, 4, 2}},
		{{3, 4}, {2, 4, 5}},
		{{2, 3, 4}, {4, 5}},
		{{2, 3, 70, 9}, {2, 3, 9, 66}},
		{{4, 1, 2, 1, 3, 4}, {3, 1, 5, 4, 6}},
		{{4}, {4}},
		{{4}, {4, 5}},
		{{3, 4}, {4}},
		{{2, 3, 4}, {4}},
		{{4}, {2, 4, 5}},
		{{1000}, {1000, 3}},
		{{1, 1, 7}, {1, 7, 1}},
	} {
		cases = append(cases, tc{tensor.Float32, s[0], s[1]})
	}
	cases = append(cases, tc{tensor.Float16, []int{2, 1, 3, 4}, []int{5, 4, 2}}, tc{tensor.Float16, []int{4}, []int{2, 4, 5}})
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v %v@%v", c.dt, c.as, c.bs), func(t *testing.T) {
			runMatmul(t, m, rng, c.dt, c.as, c.bs, ops.Matmul)
		})
	}
}

// NaN and Inf propagate as in NumPy: a NaN row gives a NaN row, Inf·0 is
// NaN, Inf times finite non-zero values is ±Inf.
func TestMatmulNaNInf(t *testing.T) {
	m, _ := testutil.Manager(t)
	inf, nan := math.Inf(1), math.NaN()
	av := []float64{1, nan, inf, 1, 1, 2, inf, 0, -inf, 1}
	bv := []float64{1, 2, 3, 4}
	want, mag, _ := refMatmul(av, []int{5, 2}, bv, []int{2, 2})
	wantB, magB, _ := refMatmul([]float64{1, 2}, []int{1, 2}, []float64{inf, 0, 0, 1}, []int{2, 2})
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float16, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			for _, c := range []struct {
				a, b      []float64
				as, bs    []int
				want, mag []float64
			}{
				{av, bv, []int{5, 2}, []int{2, 2}, want, mag},
				{[]float64{1, 2}, []float64{inf, 0, 0, 1}, []int{1, 2}, []int{2, 2}, wantB, magB},
			} {
				a, b := linTensor(t, m, dt, c.a, c.as), linTensor(t, m, dt, c.b, c.bs)
				op, err := ops.Matmul(m, a, b, nil)
				require.NoError(t, err)
				require.NoError(t, op.Run(context.Background()))
				checkClose(t, dt, 2, linRead(t, op.Out()), c.want, c.mag)
				require.NoError(t, op.Out().Close())
				require.NoError(t, op.Close())
			}
		})
	}
}

// Grids past the device's limits and k past the driver's loop cap are cut
// into several dispatches: forced here with small limits.
func TestMatmulCut(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct {
		name          string
		grid, kTiles  int
		as, bs        []int
		minDispatches int
	}{
		{"grid 2 in every dimension", 2, 1 << 15, []int{3, 300, 7}, []int{3, 7, 300}, 2 * 2 * 2},
		{"k in slices of 32", 0, 2, []int{70, 100}, []int{100, 5}, 4},
		{"both", 1, 3, []int{2, 65, 100}, []int{100, 65}, 2 * 2 * 2 * 3},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Int32} {
			if dt == tensor.Int32 && c.grid != 0 {
				continue // integers only through the adding slices of k
			}
			t.Run(fmt.Sprintf("%s %v", c.name, dt), func(t *testing.T) {
				defer opcore.SetMatmulLimits(uint32(c.grid), c.kTiles)()
				runMatmul(t, m, rng, dt, c.as, c.bs, func(o ops.Owner, a, b, out *tensor.Tensor) (*ops.Op, error) {
					op, err := ops.Matmul(o, a, b, out)
					if err == nil {
						assert.GreaterOrEqual(t, op.Dispatches(), c.minDispatches)
					}
					return op, err
				})
			})
		}
	}
}

// The kernel without its barriers reads shared-memory tiles before the
// other invocations have written them: the test must fail.
func TestMatmulMutationNoBarrier(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(15, 16))
	// The 4-vector kernel (64×64 tiles) and the scalar one (thin output).
	for _, s := range [][2][]int{{{64, 48}, {48, 64}}, {{8, 48}, {48, 200}}} {
		as, bs := s[0], s[1]
		av, bv := linRandom(rng, tensor.Float32, numel(as)), linRandom(rng, tensor.Float32, numel(bs))
		want, mag, _ := refMatmul(av, as, bv, bs)
		a, b := linTensor(t, m, tensor.Float32, av, as), linTensor(t, m, tensor.Float32, bv, bs)
		for _, broken := range []bool{false, true} {
			prepare := ops.Matmul
			if broken {
				prepare = opcore.MatmulNoBarrier
			}
			op, err := prepare(m, a, b, nil)
			require.NoError(t, err)
			require.NoError(t, op.Run(context.Background()))
			got := linRead(t, op.Out())
			bad := 0
			for i := range want {
				if math.Abs(got[i]-want[i]) > matmulTol(tensor.Float32, 48, want[i], mag[i]) {
					bad++
				}
			}
			if broken {
				assert.Positive(t, bad, "%v@%v: the kernel without barrier() gave the right result: the tests cannot see a missing barrier", as, bs)
			} else {
				assert.Zero(t, bad, "%v@%v", as, bs)
			}
			require.NoError(t, op.Out().Close())
			require.NoError(t, op.Close())
		}
	}
}

func TestMatmulErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	f32 := func(shape ...int) *tensor.Tensor {
		return linTensor(t, m, tensor.Float32, make([]float64, numel(shape)), shape)
	}
	of := func(dt tensor.Dtype, shape ...int) *tensor.Tensor {
		return linTensor(t, m, dt, make([]float64, numel(shape)), shape)
	}
	a, b := f32(3, 3), f32(3, 3)
	scalar, err := tensor.New(m, tensor.Float32, []int{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = scalar.Close() })
	for _, c := range []struct {
		name    string
		a, b, o *tensor.Tensor
		msg     string
	}{
		{"0-d a", scalar, b, nil, "0-d"},
		{"0-d b", a, scalar, nil, "0-d"},
		{"mismatched dtypes", a, of(tensor.Float16, 3, 3), nil, "a is float32, b is float16"},
		{"inner dimensions", f32(2, 3), f32(4, 2), nil, "inner dimensions differ"},
		{"1-D inner dimensions", f32(3), f32(4), nil, "inner dimensions differ"},
		{"batch not broadcastable", f32(2, 3, 3), f32(4, 3, 3), nil, "cannot be broadcast"},
		{"bool", of(tensor.Bool, 3, 3), of(tensor.Bool, 3, 3), nil, "dtype bool is not supported"},
		{"out is a", a, b, a, "cannot work in place"},
		{"out is b", a, b, b, "cannot work in place"},
		{"out of the wrong shape", a, b, f32(3, 4), "shape"},
		{"out of the wrong dtype", a, b, of(tensor.Float64, 3, 3), "float64"},
		{"nil b", a, nil, nil, "input 1 is nil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			op, err := ops.Matmul(m, c.a, c.b, c.o)
			assert.Nil(t, op)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	// Through the registry.
	_, err = ops.Prepare(m, "matmul", []*tensor.Tensor{a}, nil, ops.Attrs{})
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	_, err = ops.Prepare(m, "matmul", []*tensor.Tensor{a, b}, []*tensor.Tensor{nil, nil}, ops.Attrs{})
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
}

// The kernel of k = 0 (testable before empty tensors are): zeros over
// every element, for every dtype.
func TestMatmulZeros(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float16, tensor.Int8, tensor.Int64} {
		vals := make([]float64, 1000)
		for i := range vals {
			vals[i] = 7
		}
		c := linTensor(t, m, dt, vals, []int{10, 100})
		op, err := opcore.MatmulZeros(m, c)
		require.NoError(t, err)
		require.NoError(t, op.Run(context.Background()))
		assert.Equal(t, make([]float64, 1000), linRead(t, c), "%v", dt)
		require.NoError(t, op.Close())
	}
}

// Empty dimensions: an empty batch, m or n gives an empty result and no
// dispatch; k = 0 gives zeros.
func TestMatmulEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, s := range [][2][]int{{{0, 3}, {3, 2}}, {{2, 3}, {3, 0}}, {{0, 2, 3}, {3, 2}}, {{2, 0}, {0, 3}}, {{0}, {0}}} {
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			runMatmul(t, m, rng, tensor.Float32, s[0], s[1], ops.Matmul)
		})
	}
}

// A matmul in a sequence and in a graph: (a @ b) @ a, then the same
// through the registry's Call.
func TestMatmulRecord(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(19, 20))
	const n = 33
	av, bv := linRandom(rng, tensor.Float32, n*n), linRandom(rng, tensor.Float32, n*n)
	ab, _, _ := refMatmul(av, []int{n, n}, bv, []int{n, n})
	want, _, _ := refMatmul(ab, []int{n, n}, av, []int{n, n})
	a, b := linTensor(t, m, tensor.Float32, av, []int{n, n}), linTensor(t, m, tensor.Float32, bv, []int{n, n})
	first, err := ops.Matmul(m, a, b, nil)
	require.NoError(t, err)
	second, err := ops.Matmul(m, first.Out(), a, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, c := range []interface{ Close() error }{first, second, first.Out(), second.Out()} {
			assert.NoError(t, c.Close())
		}
	})
	check := func(t *testing.T, got []float64) {
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-4 {
				assert.Failf(t, "wrong element", "element %d is %v, want %v", i, got[i], want[i])
				return
			}
		}
	}
	t.Run("sequence", func(t *testing.T) {
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		defer s.Close()
		second.Record(first.Record(s)).SyncLocal(second.Out())
		require.NoError(t, s.Eval(ctx))
		check(t, linRead(t, second.Out()))
	})
	t.Run("graph", func(t *testing.T) {
		g, err := graph.New(m)
		require.NoError(t, err)
		require.NoError(t, second.Out().WriteBytes(make([]byte, n*n*4)))
		first.AddTo(g)
		second.AddTo(g)
		out := make([]float32, n*n)
		g.Download(second.Out(), out)
		exec, err := g.Compile()
		require.NoError(t, err)
		defer exec.Close()
		require.NoError(t, exec.Run(ctx))
		check(t, opstest.Conv2(out, func(f float32) float64 { return float64(f) }))
	})
	t.Run("call", func(t *testing.T) {
		outs, err := ops.Call(ctx, m, "matmul", []*tensor.Tensor{first.Out(), a}, nil, ops.Attrs{})
		require.NoError(t, err)
		require.Len(t, outs, 1)
		defer outs[0].Close()
		got := linRead(t, outs[0])
		for i := range want {
			require.InDelta(t, want[i], got[i], 1e-4)
		}
	})
}

// lavapipe ends an invocation's loops silently after 65535 iterations in
// all (measured: a 1×2M @ 2M×1 product of ones gave 65535·16 uncut). A k
// of 2^20+3 takes 65537 k-steps of 16: cut into dispatches of at most
// 32768 steps, the sum is whole.
func TestMatmulLoopCap(t *testing.T) {
	m, _ := testutil.Manager(t)
	defer opcore.SetSplitKMinK(1 << 62)() // the cut k, not split-K
	const k = 1<<20 + 3
	ones := make([]float64, k)
	for i := range ones {
		ones[i] = 1
	}
	a := linTensor(t, m, tensor.Float32, ones, []int{k})
	b := linTensor(t, m, tensor.Float32, ones, []int{k, 1})
	op, err := ops.Matmul(m, a, b, nil)
	require.NoError(t, err)
	defer op.Close()
	defer op.Out().Close()
	assert.Equal(t, 3, op.Dispatches())
	require.NoError(t, op.Run(context.Background()))
	assert.Equal(t, []float64{k}, linRead(t, op.Out()))
}

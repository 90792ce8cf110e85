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
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

type reduceFunc = func(ops.Owner, *tensor.Tensor, []int, bool, *tensor.Tensor) (*ops.Op, error)

var reduceFuncs = map[string]reduceFunc{
	"sum": ops.Sum, "mean": ops.Mean, "max": ops.Max, "min": ops.Min, "prod": ops.Prod,
}

// prepare builds the reduction kind over x.
func prepare(m ops.Owner, kind string, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*ops.Op, error) {
	if kind == "argmax" {
		var axis *int
		if axes != nil {
			axis = &axes[0]
		}
		return ops.Argmax(m, x, axis, keepDims, out)
	}
	return reduceFuncs[kind](m, x, axes, keepDims, out)
}

// runReduce runs the reduction kind over x and returns its result.
func runReduce(t *testing.T, m ops.Owner, kind string, x *tensor.Tensor, axes []int, keepDims bool) host {
	t.Helper()
	op, err := prepare(m, kind, x, axes, keepDims, nil)
	require.NoError(t, err)
	defer func() {
		assert.NoError(t, op.Close())
		assert.NoError(t, op.Out().Close())
	}()
	require.NoError(t, op.Run(context.Background()))
	return downloadHost(t, op.Out())
}

// checkReduce runs kind over h and compares with the CPU reference.
func checkReduce(t *testing.T, m ops.Owner, kind string, h host, x *tensor.Tensor, axes []int, keepDims bool) {
	t.Helper()
	got := runReduce(t, m, kind, x, axes, keepDims)
	want := reference(kind, h, normalize(axes, len(h.shape)), keepDims)
	assert.Empty(t, compare(kind, got, want), "%s %v over %v keepDims %v", kind, h.dt, axes, keepDims)
}

func TestReduceAxes(t *testing.T) {
	m, _ := testutil.Manager(t)
	shape := []int{3, 4, 5}
	axesList := [][]int{nil, {}, {0}, {1}, {2}, {-1}, {0, 1}, {0, 2}, {1, 2}, {-3, -1}, {2, 0, 1}}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Int32} {
		h := randomHost(dt, shape, 1)
		x := upload(t, m, h)
		for _, kind := range []string{"sum", "mean", "max", "min", "prod", "argmax"} {
			if kind == "mean" && dt != tensor.Float32 {
				continue
			}
			for _, axes := range axesList {
				if kind == "argmax" && len(axes) != 1 && axes != nil {
					continue
				}
				for _, keep := range []bool{false, true} {
					if keep && kind != "sum" && kind != "argmax" {
						continue // keepDims changes only the shape
					}
					t.Run(fmt.Sprintf("%v/%s/%v/keep=%v", dt, kind, axes, keep), func(t *testing.T) {
						checkReduce(t, m, kind, h, x, axes, keep)
					})
				}
			}
		}
	}
}

// nearOne returns float values whose products stay in range: (64+k)/64,
// k in [-2, 2], exact in every float dtype.
func nearOne(dt tensor.Dtype, shape []int, seed uint64) host {
	r := rand.New(rand.NewPCG(seed, 3))
	h := host{dt: dt, shape: shape, f: make([]float64, numelOf(shape))}
	for k := range h.f {
		h.f[k] = float64(64+r.IntN(5)-2) / 64
	}
	return h
}

// TestReduceDtypes runs every dtype's kernels. Each dtype compiles its
// own modules, so the dtypes run in parallel (the test uses no hooks, and
// the tests that do are not parallel).
func TestReduceDtypes(t *testing.T) {
	t.Parallel()
	m, _ := testutil.Manager(t)
	shape := []int{5, 300}
	for _, dt := range tensor.Dtypes() {
		t.Run(dt.String(), func(t *testing.T) {
			t.Parallel()
			h := randomHost(dt, shape, uint64(dt))
			x := upload(t, m, h)
			hp, xp := h, x
			if isFloatDt(dt) {
				hp = nearOne(dt, shape, uint64(dt))
				xp = upload(t, m, hp)
			}
			for _, kind := range []string{"sum", "mean", "max", "min", "prod", "argmax"} {
				if kind == "mean" && !isFloatDt(dt) {
					continue
				}
				for _, axes := range [][]int{nil, {0}, {1}} {
					t.Run(fmt.Sprintf("%s/%v", kind, axes), func(t *testing.T) {
						if kind == "prod" {
							checkReduce(t, m, kind, hp, xp, axes, false)
						} else {
							checkReduce(t, m, kind, h, x, axes, false)
						}
					})
				}
			}
		})
	}
}

// modesFor returns the ways to run a reduction of segments of n: as the
// device gives it (subgroup arithmetic where the device has it, 4-vector
// loads where the layout allows), with the shared-memory tree forced
// (where passes use the whole workgroup: n > 1024), and, with scalar,
// with element-by-element loads and no column mode for strided reads.
func modesFor(n int, scalar bool) []opcore.ReduceHooks {
	modes := []opcore.ReduceHooks{{}}
	if n > 1024 {
		modes = append(modes, opcore.ReduceHooks{SharedOnly: true})
	}
	if scalar {
		modes = append(modes, opcore.ReduceHooks{Scalar: true, NoColumns: true})
	}
	return modes
}

// inModes runs f in each mode.
func inModes(t *testing.T, modes []opcore.ReduceHooks, f func(t *testing.T)) {
	for _, h := range modes {
		t.Run(fmt.Sprintf("%+v", h), func(t *testing.T) {
			defer opcore.SetReduceHooks(h)()
			f(t)
		})
	}
}

func TestReduceSizes(t *testing.T) {
	m, _ := testutil.Manager(t)
	sg, err := opcore.ReduceUsesSubgroup(m)
	require.NoError(t, err)
	t.Logf("subgroup arithmetic used: %v", sg)
	for _, n := range []int{1, 3, 63, 65, 1023, 1025, 4097, 16384, 16385, 70001} {
		h := randomHost(tensor.Float32, []int{n}, uint64(n))
		x := upload(t, m, h)
		hp := nearOne(tensor.Float32, []int{n}, uint64(n))
		xp := upload(t, m, hp)
		h2 := randomHost(tensor.Float32, []int{n, 3}, uint64(n)+1)
		x2 := upload(t, m, h2)
		h3 := randomHost(tensor.Float32, []int{3, n}, uint64(n)+2)
		x3 := upload(t, m, h3)
		modes := modesFor(n, n == 3 || n == 1025 || n == 70001)
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			inModes(t, modes, func(t *testing.T) {
				for _, kind := range []string{"sum", "mean", "max", "min", "argmax"} {
					checkReduce(t, m, kind, h, x, nil, false)
				}
				checkReduce(t, m, "prod", hp, xp, nil, false)
				// One segment of n per output, reduced through strides
				// (axis 0) and contiguously (axis 1).
				checkReduce(t, m, "sum", h2, x2, []int{0}, false)
				checkReduce(t, m, "argmax", h2, x2, []int{0}, true)
				checkReduce(t, m, "max", h3, x3, []int{1}, false)
			})
		})
	}
	// Accumulators of other types through full-workgroup passes.
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Int32, tensor.Uint8, tensor.Float16, tensor.Int64} {
		h := randomHost(dt, []int{2, 20000}, 11)
		x := upload(t, m, h)
		t.Run(dt.String(), func(t *testing.T) {
			inModes(t, modesFor(20000, false), func(t *testing.T) {
				for _, kind := range []string{"sum", "max", "min"} {
					checkReduce(t, m, kind, h, x, []int{-1}, false)
				}
			})
		})
	}
}

// TestReduceBig sums 16M+3 float32 against a float64 reference, and
// 16M+3 float16 along axis 0 of a 2-D tensor (read through strides) bit
// for bit: the values are small integers, whose float32 sums are exact,
// so the one rounding to float16 at the end decides the result.
func TestReduceBig(t *testing.T) {
	m, _ := testutil.Manager(t)
	const n = 16<<20 + 3
	// A multiplicative hash for values: cheaper than math/rand under -race.
	hash := func(k int) uint32 { return uint32(k) * 2654435761 }
	xs := make([]float32, n)
	var want float64
	for k := range xs {
		xs[k] = float32(hash(k)>>8) * 0x1p-24 // [0, 1)
		want += float64(xs[k])
	}
	x, err := tensor.FromSlice(m, xs)
	require.NoError(t, err)
	defer x.Close()
	op, err := ops.Sum(m, x, nil, false, nil)
	require.NoError(t, err)
	defer op.Out().Close()
	defer op.Close()
	assert.Equal(t, 2, op.Dispatches(), "16M+3 elements: a pass of 16384, then one of 1025")
	require.NoError(t, op.Run(context.Background()))
	got, err := op.Out().Float32s()
	require.NoError(t, err)
	// All values are positive: sum|x| is the sum itself.
	tol := depth(n) * 0x1p-24 * want
	assert.InDelta(t, want, float64(got[0]), tol, "float32 sum of %d", n)
	t.Logf("float32 sum of %d: got %v, want %v, error %.3g (bound %.3g)", n, got[0], want, float64(got[0])-want, tol)

	hs := make([]tensor.Half, 2*n)
	var sums [2]float64
	for k := range hs {
		v := float32(int(hash(k)>>13)%3 - 1)
		hs[k] = tensor.HalfFrom(v)
		sums[k%2] += float64(v)
	}
	x16, err := tensor.FromSlice(m, hs, n, 2)
	require.NoError(t, err)
	defer x16.Close()
	op16, err := ops.Sum(m, x16, []int{0}, false, nil)
	require.NoError(t, err)
	defer op16.Out().Close()
	defer op16.Close()
	require.NoError(t, op16.Run(context.Background()))
	got16, err := op16.Out().Float16s()
	require.NoError(t, err)
	for k := range 2 {
		assert.Equal(t, tensor.HalfFrom(float32(sums[k])), got16[k], "float16 column %d: want %v", k, sums[k])
	}
}

func TestReduceNaNInf(t *testing.T) {
	m, _ := testutil.Manager(t)
	nan, inf := math.NaN(), math.Inf(1)
	long := func(at map[int]float64) []float64 {
		v := make([]float64, 20000)
		for k := range v {
			v[k] = float64(k % 7)
		}
		for k, e := range at {
			v[k] = e
		}
		return v
	}
	for _, tc := range []struct {
		name string
		x    []float64
	}{
		{"nan", []float64{1, nan, 3}},
		{"inf-inf", []float64{1, inf, -inf}},
		{"inf", []float64{1, inf, 2}},
		{"-inf", []float64{-inf, 0, -inf}},
		{"all -inf", []float64{-inf, -inf}},
		{"all +inf", []float64{inf, inf, inf}},
		{"ties", []float64{3, 7, 7, 1}},
		{"nan first", []float64{nan, 5, nan}},
		{"nan later", []float64{1, 2, nan, nan, 9}},
		{"long nan", long(map[int]float64{17000: nan, 19000: nan, 10: inf})},
		{"long inf ties", long(map[int]float64{1500: inf, 18500: inf})},
		{"long -inf", long(map[int]float64{0: -inf, 19999: -inf})},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float16, tensor.Float64} {
			h := host{dt: dt, shape: []int{len(tc.x)}, f: tc.x}
			x := upload(t, m, h)
			inModes(t, modesFor(len(tc.x), len(tc.x) > 8192), func(t *testing.T) {
				for _, kind := range []string{"sum", "max", "min", "argmax", "mean"} {
					t.Run(fmt.Sprintf("%s/%v/%s", tc.name, dt, kind), func(t *testing.T) {
						checkReduce(t, m, kind, h, x, nil, false)
					})
				}
			})
		}
	}
}

func TestReduceZeroD(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{})
	require.NoError(t, err)
	defer x.Close()
	require.NoError(t, tensor.Write(x, []float32{-2.5}))
	h := host{dt: tensor.Float32, shape: []int{}, f: []float64{-2.5}}
	for _, kind := range []string{"sum", "mean", "max", "min", "prod", "argmax"} {
		for _, axes := range [][]int{nil, {}} {
			if kind == "argmax" && axes != nil {
				continue
			}
			for _, keep := range []bool{false, true} {
				got := runReduce(t, m, kind, x, axes, keep)
				assert.Equal(t, []int{}, got.shape, kind)
				assert.Empty(t, compare(kind, got, reference(kind, h, normalize(axes, 0), keep)), kind)
			}
		}
	}
	_, err = ops.Sum(m, x, []int{0}, false, nil)
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "axis 0 of a 0-d tensor")
}

func TestReduceEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{0, 3})
	require.NoError(t, err)
	defer x.Close()
	h := host{dt: tensor.Float32, shape: []int{0, 3}, f: []float64{}}
	for _, kind := range []string{"sum", "prod", "mean"} {
		got := runReduce(t, m, kind, x, []int{0}, false)
		assert.Empty(t, compare(kind, got, reference(kind, h, []int{0}, false)), kind)
		// Reducing the other axis has no outputs and no dispatches.
		op, err := prepare(m, kind, x, []int{1}, false, nil)
		require.NoError(t, err)
		assert.Equal(t, 0, op.Dispatches())
		assert.Equal(t, []int{0}, op.Out().Shape())
		require.NoError(t, op.Run(context.Background()))
		require.NoError(t, op.Close())
		require.NoError(t, op.Out().Close())
	}
	for _, kind := range []string{"max", "min", "argmax"} {
		_, err := prepare(m, kind, x, []int{0}, false, nil)
		assert.ErrorIs(t, err, vkflow.ErrInvalid, kind)
		assert.ErrorContains(t, err, "empty", kind)
	}
}

func TestReduceErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{4, 5})
	require.NoError(t, err)
	defer x.Close()
	xi, err := tensor.New(m, tensor.Int32, []int{4, 5})
	require.NoError(t, err)
	defer xi.Close()
	wrongShape, err := tensor.New(m, tensor.Float32, []int{5})
	require.NoError(t, err)
	defer wrongShape.Close()
	wrongDtype, err := tensor.New(m, tensor.Float64, []int{4})
	require.NoError(t, err)
	defer wrongDtype.Close()
	int32Out, err := tensor.New(m, tensor.Int32, []int{4})
	require.NoError(t, err)
	defer int32Out.Close()
	for _, tc := range []struct {
		name string
		f    func() (*ops.Op, error)
		msg  string
	}{
		{"axis too big", func() (*ops.Op, error) { return ops.Sum(m, x, []int{2}, false, nil) }, "axis 2 is out of range"},
		{"axis too negative", func() (*ops.Op, error) { return ops.Max(m, x, []int{-3}, false, nil) }, "axis -3"},
		{"repeated", func() (*ops.Op, error) { return ops.Min(m, x, []int{1, 1}, false, nil) }, "repeated"},
		{"repeated negative", func() (*ops.Op, error) { return ops.Prod(m, x, []int{0, -2}, false, nil) }, "repeated"},
		{"mean of ints", func() (*ops.Op, error) { return ops.Mean(m, xi, nil, false, nil) }, "int32"},
		{"out shape", func() (*ops.Op, error) { return ops.Sum(m, x, []int{1}, false, wrongShape) }, "shape [5], want [4]"},
		{"out keepdims shape", func() (*ops.Op, error) { return ops.Sum(m, x, []int{1}, true, wrongDtype) }, "float64"},
		{"out dtype", func() (*ops.Op, error) { return ops.Sum(m, x, []int{1}, false, wrongDtype) }, "float64, want float32"},
		{"int sum is int64", func() (*ops.Op, error) { return ops.Sum(m, xi, []int{1}, false, int32Out) }, "want int64"},
		{"argmax axis", func() (*ops.Op, error) { a := 2; return ops.Argmax(m, x, &a, false, nil) }, "out of range"},
		{"in place", func() (*ops.Op, error) { return ops.Max(m, x, []int{}, false, x) }, "in place"},
		{"nil input", func() (*ops.Op, error) { return ops.Sum(m, nil, nil, false, nil) }, "nil"},
		{"argmax two axes", func() (*ops.Op, error) {
			return ops.Prepare(m, "argmax", []*tensor.Tensor{x}, nil, ops.Attrs{Axes: []int{0, 1}})
		}, "one axis"},
		{"two inputs", func() (*ops.Op, error) {
			return ops.Prepare(m, "sum", []*tensor.Tensor{x, x}, nil, ops.Attrs{})
		}, "2 inputs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := tc.f()
			assert.Nil(t, op)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	_, err = ops.Mean(m, xi, nil, false, nil)
	assert.ErrorContains(t, err, "cast")
}

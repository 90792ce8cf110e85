package opcore_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func f64p(v float64) *float64 { return &v }

func ptrBool(v bool) *bool { return &v }

// gradCases: at least one per op with a VJP (TestGradCoverage checks it
// against the registry).
var gradCases = []gcase{
	// Unary, real.
	{op: "neg", in: []gin{rin(3, 4)}},
	{op: "exp", in: []gin{rin(3, 4)}},
	{op: "expm1", in: []gin{rin(5)}},
	{op: "log", in: []gin{pos(5)}},
	{op: "log1p", in: []gin{pos(5)}},
	{op: "log2", in: []gin{pos(5)}},
	{op: "log10", in: []gin{pos(5)}},
	{op: "sqrt", in: []gin{pos(2, 3)}},
	{op: "square", in: []gin{rin(2, 3)}},
	{op: "reciprocal", in: []gin{pos(5)}},
	{op: "sin", in: []gin{rin(6)}},
	{op: "cos", in: []gin{rin(6)}},
	{op: "tan", in: []gin{rin(6)}},
	{op: "asin", in: []gin{rng(-0.8, 0.8, 6)}},
	{op: "acos", in: []gin{rng(-0.8, 0.8, 6)}},
	{op: "atan", in: []gin{rin(6)}},
	{op: "sinh", in: []gin{rin(6)}},
	{op: "cosh", in: []gin{rin(6)}},
	{op: "tanh", in: []gin{rin(6)}},
	{op: "asinh", in: []gin{rin(6)}},
	{op: "acosh", in: []gin{rng(1.5, 3, 6)}},
	{op: "atanh", in: []gin{rng(-0.8, 0.8, 6)}},
	{op: "sigmoid", in: []gin{rin(6)}},
	{op: "relu", in: []gin{away(6)}},
	{op: "abs", in: []gin{away(6)}},
	{op: "conj", in: []gin{rin(4)}},
	{op: "real", in: []gin{rin(4)}},
	{op: "imag", in: []gin{rin(4)}},
	{op: "sign", in: []gin{away(6)}},
	{op: "floor", in: []gin{rng(0.1, 0.9, 6)}},
	{op: "ceil", in: []gin{rng(0.1, 0.9, 6)}},
	{op: "trunc", in: []gin{rng(0.1, 0.9, 6)}},
	{op: "round", in: []gin{rng(0.1, 0.4, 6)}},
	// Unary, complex.
	{op: "neg", name: "complex", in: []gin{cxIn(4)}},
	{op: "exp", name: "complex", in: []gin{cxIn(4)}},
	{op: "log", name: "complex", in: []gin{cxIn(4)}},
	{op: "sqrt", name: "complex", in: []gin{cxIn(4)}},
	{op: "square", name: "complex", in: []gin{cxIn(4)}},
	{op: "abs", name: "complex", in: []gin{cxIn(4)}},
	{op: "conj", name: "complex", in: []gin{cxIn(4)}},
	{op: "real", name: "complex", in: []gin{cxIn(4)}},
	{op: "imag", name: "complex", in: []gin{cxIn(4)}},
	{op: "sin", name: "complex", in: []gin{cxIn(4)}},
	// Binary, with broadcasting.
	{op: "add", in: []gin{rin(2, 3, 4), rin(3, 1)}},
	{op: "sub", in: []gin{rin(3, 1), rin(2, 3, 4)}},
	{op: "mul", in: []gin{rin(2, 3, 4), rin(4)}},
	{op: "div", in: []gin{rin(2, 3), pos(3)}},
	{op: "pow", in: []gin{pos(2, 3), rin(2, 3)}},
	{op: "maximum", in: []gin{rin(3, 4), rin(4)}},
	{op: "minimum", in: []gin{rin(3, 4), rin(3, 4)}},
	{op: "atan2", in: []gin{rin(5), away(5)}},
	{op: "hypot", in: []gin{away(5), away(5)}},
	{op: "copysign", in: []gin{away(5), away(5)}},
	{op: "logaddexp", in: []gin{rin(5), rin(2, 5)}},
	{op: "remainder", in: []gin{rng(0.1, 2.9, 5), rng(0.7, 1.3, 5)}},
	{op: "floor_divide", in: []gin{rng(0.1, 0.9, 5), rng(1.1, 1.9, 5)}},
	{op: "add", name: "complex", in: []gin{cxIn(3, 2), cxIn(2)}},
	{op: "mul", name: "complex", in: []gin{cxIn(3, 2), cxIn(2)}},
	{op: "div", name: "complex", in: []gin{cxIn(3), cxIn(3)}},
	// where, clip, cast.
	{op: "where", in: []gin{{shape: []int{2, 3}, fixed: []float64{1, 0, 1, 0, 0, 1}, dtype: tensor.Bool}, rin(2, 3), rin(3)}},
	{op: "clip", in: []gin{{shape: []int{6}, fixed: []float64{-0.9, -0.3, 0.1, 0.4, 0.7, -0.6}}},
		at: ops.Attrs{Min: f64p(-0.5), Max: f64p(0.5)}},
	{op: "cast", in: []gin{rin(4)}, at: ops.Attrs{Dtype: tensor.Complex128}},
	// Reductions, softmax, scans.
	{op: "sum", in: []gin{rin(2, 3, 4)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "sum", name: "all keepdims", in: []gin{rin(2, 3)}, at: ops.Attrs{KeepDims: true}},
	{op: "sum", name: "complex", in: []gin{cxIn(2, 3)}, at: ops.Attrs{Axes: []int{0}}},
	{op: "mean", in: []gin{rin(2, 3, 4)}, at: ops.Attrs{Axes: []int{0, 2}}},
	{op: "prod", in: []gin{rin(3, 4)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "prod", name: "a zero, all axes", in: []gin{{shape: []int{2, 3}, fixed: []float64{0.5, 0, 1.5, -2, 0.75, 1.25}}}},
	{op: "prod", name: "middle axes keepdims", in: []gin{rin(2, 3, 2, 2)}, at: ops.Attrs{Axes: []int{1, 2}, KeepDims: true}},
	{op: "max", in: []gin{rin(3, 5)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "min", in: []gin{rin(3, 5)}, at: ops.Attrs{Axes: []int{0}, KeepDims: true}},
	{op: "softmax", in: []gin{rin(3, 5)}},
	{op: "softmax", name: "axis 0", in: []gin{rin(3, 5)}, at: ops.Attrs{Axes: []int{0}}},
	{op: "cumulative_sum", in: []gin{rin(3, 5)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "cumulative_sum", name: "include_initial", in: []gin{rin(4, 3)}, at: ops.Attrs{Axes: []int{0}, IncludeInitial: true}},
	// Products.
	{op: "matmul", in: []gin{rin(2, 3, 4), rin(4, 5)}},
	{op: "matmul", name: "vector-matrix", in: []gin{rin(3), rin(2, 3, 2)}},
	{op: "matmul", name: "matrix-vector", in: []gin{rin(2, 3), rin(3)}},
	{op: "matmul", name: "complex", in: []gin{cxIn(2, 3), cxIn(3, 2)}},
	{op: "tensordot", in: []gin{rin(2, 3, 4), rin(4, 3, 5)}, at: ops.Attrs{Axes: []int{1, 2}, Axes2: []int{1, 0}}},
	{op: "vecdot", in: []gin{rin(3, 4), rin(4)}},
	{op: "vecdot", name: "complex", in: []gin{cxIn(3, 4), cxIn(3, 4)}},
	{op: "outer", in: []gin{rin(3), rin(4)}},
	{op: "cross", in: []gin{rin(2, 3), rin(3)}},
	{op: "tril", in: []gin{rin(4, 4)}, at: ops.Attrs{K: -1}},
	{op: "triu", in: []gin{rin(3, 4)}},
	// Linalg.
	{op: "inv", in: []gin{{shape: []int{2, 3, 3}, lo: -1, hi: 1, diag: 3}}},
	{op: "solve", in: []gin{{shape: []int{3, 3}, lo: -1, hi: 1, diag: 3}, rin(3, 2)}},
	{op: "solve", name: "vector", in: []gin{{shape: []int{3, 3}, lo: -1, hi: 1, diag: 3}, rin(3)}},
	{op: "solve", name: "batch broadcast", in: []gin{{shape: []int{2, 3, 3}, lo: -1, hi: 1, diag: 3}, rin(3, 2)}},
	{op: "solve", name: "complex", in: []gin{{shape: []int{3, 3}, lo: 0.3, hi: 1, signed: true, cplx: true, diag: 3}, cxIn(3, 2)}},
	{op: "det", in: []gin{{shape: []int{2, 3, 3}, lo: -1, hi: 1, diag: 2}}},
	{op: "det", name: "complex", in: []gin{{shape: []int{3, 3}, lo: 0.3, hi: 1, signed: true, cplx: true, diag: 2}}},
	{op: "slogdet", in: []gin{{shape: []int{3, 3}, lo: -1, hi: 1, diag: 2}}, out: 1},
	{op: "cholesky", in: []gin{{shape: []int{3, 3}, lo: -1, hi: 1, diag: 4}}},
	{op: "cholesky", name: "upper", in: []gin{{shape: []int{2, 3, 3}, lo: -1, hi: 1, diag: 4}}, at: ops.Attrs{Upper: true}},
	{op: "eigh", in: []gin{rin(3, 3)}},
	{op: "eigvalsh", in: []gin{rin(2, 4, 4)}},
	{op: "svdvals", in: []gin{rin(3, 4)}},
	{op: "svdvals", name: "tall batch", in: []gin{rin(2, 4, 3)}},
	{op: "trace", in: []gin{rin(3, 4)}, at: ops.Attrs{Offset: 1}},
	{op: "diagonal", in: []gin{rin(2, 3, 4)}, at: ops.Attrs{Offset: -1}},
	{op: "vector_norm", in: []gin{rin(3, 4)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "vector_norm", name: "ord 1", in: []gin{away(3, 4)}, at: ops.Attrs{Ord: "1"}},
	{op: "vector_norm", name: "complex", in: []gin{cxIn(4)}},
	{op: "matrix_norm", in: []gin{rin(2, 3, 3)}},
	{op: "pinv", name: "wide", in: []gin{rin(3, 4)}},
	{op: "pinv", name: "tall batch", in: []gin{rin(2, 4, 3)}},
	{op: "matrix_power", in: []gin{rin(3, 3)}, at: ops.Attrs{N: 3}},
	{op: "qr", name: "Q", in: []gin{rin(4, 3)}},
	{op: "qr", name: "R", in: []gin{rin(2, 3, 3)}, out: 1},
	{op: "svd", name: "S", in: []gin{rin(3, 4)}, at: ops.Attrs{FullMatrices: ptrBool(false)}, out: 1},
	{op: "svd", name: "U", in: []gin{rin(4, 3)}, at: ops.Attrs{FullMatrices: ptrBool(false)}},
	{op: "svd", name: "Vh", in: []gin{rin(3, 4)}, at: ops.Attrs{FullMatrices: ptrBool(false)}, out: 2},
	// Sort, gather and the cumulative product.
	{op: "sort", in: []gin{rin(3, 5)}},
	{op: "sort", name: "descending axis 0", in: []gin{rin(4, 3)}, at: ops.Attrs{Axes: []int{0}, Descending: true}},
	{op: "gather", in: []gin{rin(2, 3, 4), {shape: []int{5}, fixed: []float64{0, 2, -1, 2, 1}, dtype: tensor.Int64},
		{shape: []int{5}, fixed: []float64{3, 0, 1, 0, 3}, dtype: tensor.Int64}}, at: ops.Attrs{Axes: []int{1}}},
	{op: "cumulative_prod", in: []gin{rin(3, 4)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "cumulative_prod", name: "a zero, include_initial", in: []gin{{shape: []int{5}, fixed: []float64{0.5, -1.5, 0, 2, 0.75}}},
		at: ops.Attrs{IncludeInitial: true}},
	// FFTs.
	{op: "fft", in: []gin{cxIn(2, 6)}},
	{op: "fft", name: "padded ortho", in: []gin{cxIn(6, 2)}, at: ops.Attrs{N: 8, Axes: []int{0}, Norm: "ortho"}},
	{op: "ifft", name: "cropped", in: []gin{cxIn(2, 6)}, at: ops.Attrs{N: 4}},
	{op: "fftn", in: []gin{cxIn(3, 4)}},
	{op: "ifftn", name: "s", in: []gin{cxIn(2, 3, 4)}, at: ops.Attrs{S: []int{4, 6}, Norm: "forward"}},
	{op: "rfft", in: []gin{rin(2, 7)}},
	{op: "rfft", name: "padded forward", in: []gin{rin(6)}, at: ops.Attrs{N: 9, Norm: "forward"}},
	{op: "irfft", in: []gin{cxIn(2, 5)}},
	{op: "irfft", name: "odd n", in: []gin{cxIn(5)}, at: ops.Attrs{N: 7, Norm: "ortho"}},
	{op: "hfft", in: []gin{cxIn(5)}},
	{op: "ihfft", in: []gin{rin(6)}},
	{op: "rfftn", in: []gin{rin(3, 4)}},
	{op: "rfftn", name: "s axes", in: []gin{rin(3, 2, 5)}, at: ops.Attrs{S: []int{4, 6}, Axes: []int{0, 2}, Norm: "ortho"}},
	{op: "irfftn", in: []gin{cxIn(3, 4)}},
	{op: "irfftn", name: "s", in: []gin{cxIn(2, 3, 4)}, at: ops.Attrs{S: []int{4, 5}}},
	// The soft rasterizer (ops/render).
	{op: "soft_raster", in: []gin{rng(0.2, 5.8, 3, 3, 2), rng(0.1, 0.9, 3, 4)}, at: ops.Attrs{Shape: []int{5, 6}, Sigma: opcore.Ptr(0.8)}},
	{op: "soft_raster", name: "one layer of two", in: []gin{rng(0.2, 4.8, 3, 3, 2), rng(0.1, 0.9, 3, 4)}, at: ops.Attrs{Shape: []int{4, 5}, Start: 1, Count: 1}},
	{op: "over", in: []gin{rng(0, 1, 3, 4, 4), rng(0, 1, 3, 4, 4)}},
	// Manipulation and indexing.
	{op: "transpose", in: []gin{rin(2, 3, 4)}, at: ops.Attrs{Perm: []int{2, 0, 1}}},
	{op: "flip", in: []gin{rin(3, 4)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "roll", in: []gin{rin(3, 4)}, at: ops.Attrs{Shift: []int{1, -2}, Axes: []int{0, 1}}},
	{op: "broadcast_to", in: []gin{rin(3, 1)}, at: ops.Attrs{Shape: []int{2, 3, 4}}},
	{op: "tile", in: []gin{rin(2, 1, 3)}, at: ops.Attrs{Reps: []int{2, 1, 3, 2}}},
	{op: "repeat", in: []gin{rin(2, 3)}, at: ops.Attrs{Repeats: 2, Axes: []int{1}}},
	{op: "repeat", name: "flattened", in: []gin{rin(2, 3)}, at: ops.Attrs{Repeats: 3}},
	{op: "concat", in: []gin{rin(2, 3), rin(2, 1), rin(2, 2)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "stack", in: []gin{rin(2, 3), rin(2, 3)}, at: ops.Attrs{Axes: []int{1}}},
	{op: "strided_copy", name: "a strided slice", in: []gin{rin(4, 5)}, at: ops.Attrs{Shape: []int{2, 2}, SrcOffset: 6, SrcStrides: []int{10, -1}}},
	{op: "strided_copy", name: "a broadcast", in: []gin{rin(3)}, at: ops.Attrs{Shape: []int{2, 3}, SrcStrides: []int{0, 1}}},
	{op: "take", in: []gin{rin(3, 4), {shape: []int{5}, fixed: []float64{1, -1, 1, 0, 3}, dtype: tensor.Int64}}, at: ops.Attrs{Axes: []int{1}}},
}

func TestGradCheck(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	for i, c := range gradCases {
		name := c.op
		if c.name != "" {
			name += "/" + c.name
		}
		t.Run(name, func(t *testing.T) {
			require.NoError(t, checkGrad(t, m, s, c, uint64(i)+1))
		})
	}
}

// TestGradCoverage: every op of the registry has a gradient entry, and
// every op with a VJP has a case above, so an op added with a VJP and no
// test fails here.
func TestGradCoverage(t *testing.T) {
	tested := map[string]bool{}
	for _, c := range gradCases {
		tested[c.op] = true
	}
	for _, name := range ops.Names() {
		info, err := ops.GradientOf(name)
		require.NoError(t, err)
		switch info.Kind {
		case ops.GradVJP:
			assert.True(t, tested[name], "op %q has a VJP and no case in gradCases", name)
		default:
			assert.NotEmpty(t, info.Reason, "op %q says no gradient without a reason", name)
		}
	}
	assert.Contains(t, ops.Differentiable(), "matmul")
	assert.NotContains(t, ops.Differentiable(), "equal")
}

// TestGradMutation: a wrong VJP (sin's rule for cos) is caught by the
// check.
func TestGradMutation(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	c := gcase{op: "cos", in: []gin{rin(6)}}
	require.NoError(t, checkGrad(t, m, s, c, 1))
	restore := opcore.SwapVJP("cos", "sin")
	defer restore()
	err = checkGrad(t, m, s, c, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "finite differences")
}

// TestGradRefused: ops without a VJP refuse, naming why, and queue
// nothing; bad arguments are ErrInvalid.
func TestGradRefused(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	x, err := tensor.FromSlice(m, []float64{1, 2, 3})
	require.NoError(t, err)
	before := m.OpCacheStats().Submits
	for _, tc := range []struct {
		name     string
		op       string
		in, cot  []*tensor.Tensor
		noGrad   bool
		contains string
	}{
		{"comparison", "less", []*tensor.Tensor{x, x}, []*tensor.Tensor{x}, true, "not differentiable"},
		{"index", "argmax", []*tensor.Tensor{x}, []*tensor.Tensor{x}, true, "not differentiable"},
		{"pending", "scatter", []*tensor.Tensor{x}, []*tensor.Tensor{x}, true, "no VJP yet"},
		{"unknown op", "nope", []*tensor.Tensor{x}, []*tensor.Tensor{x}, false, "no op named"},
		{"no cotangent", "exp", []*tensor.Tensor{x}, nil, false, "no cotangents"},
		{"nil input", "exp", []*tensor.Tensor{nil}, []*tensor.Tensor{x}, false, "input 0 is nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := s.VJP(tc.op, tc.in, nil, tc.cot, ops.Attrs{}, nil)
			require.Error(t, err)
			assert.Nil(t, g)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Equal(t, tc.noGrad, errors.Is(err, ops.ErrNoGradient), err.Error())
			assert.Contains(t, err.Error(), tc.contains)
		})
	}
	assert.Equal(t, before, m.OpCacheStats().Submits, "a refused VJP queued work")

	// wants of the wrong length.
	_, err = s.VJP("exp", []*tensor.Tensor{x}, nil, []*tensor.Tensor{x}, ops.Attrs{}, []bool{true, true})
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	assert.Contains(t, err.Error(), "2 wants for 1 inputs")

	// A cotangent of the wrong shape.
	y, err := tensor.FromSlice(m, []float64{1, 2})
	require.NoError(t, err)
	_, err = s.VJP("exp", []*tensor.Tensor{x}, []*tensor.Tensor{x}, []*tensor.Tensor{y}, ops.Attrs{}, nil)
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	assert.Contains(t, err.Error(), "cotangent 0")
}

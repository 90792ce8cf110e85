package opcore_test

import (
	"context"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opstest"
	"github.com/vkflow/vkflow/tensor"
)

// Host helpers for the complex tests: complex128 values stand for
// complex64 ones too (rounded per part on upload).

// runOp runs op and returns its output's values.
func runOp(t *testing.T, op *ops.Op, err error) ([]complex128, *tensor.Tensor) {
	t.Helper()
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, op.Close())
		_ = op.Out().Close()
	})
	require.NoError(t, op.Run(context.Background()))
	return readBack(t, op.Out()), op.Out()
}

// partClose reports whether got is want within tol·scale: NaN for NaN,
// the same infinity for an infinity.
func partClose(want, got, scale, tol float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(scale, 0) || math.IsNaN(scale) || scale == 0:
		return want == got
	}
	return math.Abs(want-got) <= tol*scale
}

// cxSame checks got against want part by part, within tol units of eps
// times scale[i] (nil: |want[i]|).
func cxSame(t *testing.T, dt tensor.Dtype, want, got []complex128, scale []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	bad := 0
	for i := range want {
		s := cmplx.Abs(want[i])
		if scale != nil {
			s = scale[i]
		}
		e := tol * cxEps(dt)
		if !partClose(real(want[i]), real(got[i]), s, e) || !partClose(imag(want[i]), imag(got[i]), s, e) {
			if bad < 5 {
				t.Errorf("%s: element %d: got %v, want %v", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements wrong", what, bad, len(want))
	}
}

// cxSpecials are parts that exercise the special cases: zeros of both
// signs, infinities, NaN, the extremes of the range.
func cxSpecials(dt tensor.Dtype) []float64 {
	// complex64's are such that no product of two overflows float32:
	// Go computes complex64 arithmetic in complex128, then rounds.
	big, tiny := 1e300, 1e-300
	if dt == tensor.Complex64 {
		big, tiny = 1e18, 1e-18
	}
	return []float64{0, math.Copysign(0, -1), 1, -2.5, math.Inf(1), math.Inf(-1), math.NaN(), big, -big, tiny}
}

// cxInputs returns n random values of magnitude up to lim, then every
// pair of special parts.
func cxInputs(r *rand.Rand, dt tensor.Dtype, n int, lim float64) []complex128 {
	v := make([]complex128, 0, n+100)
	for range n {
		v = append(v, cxRound(dt, complex((2*r.Float64()-1)*lim, (2*r.Float64()-1)*lim)))
	}
	for _, a := range cxSpecials(dt) {
		for _, b := range cxSpecials(dt) {
			v = append(v, cxRound(dt, complex(a, b)))
		}
	}
	return v
}

// signbits returns the sign bits of v's parts.
func signbits(v complex128) [2]bool {
	return [2]bool{math.Signbit(real(v)), math.Signbit(imag(v))}
}

// Shared with the op packages' tests (internal/opstest).
var (
	cxRound  = opstest.CxRound
	cxUpload = opstest.CxUpload
	readBack = opstest.ReadBack
	cxEps    = opstest.CxEps
)

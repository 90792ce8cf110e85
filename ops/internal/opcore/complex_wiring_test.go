package opcore_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// TestComplexMathWiring: the transcendental ops take a complex dtype
// exactly when the complex math table names a function for them, and
// call it on the element (pow on both). The table entries here are
// test-only stand-ins: GLSL's own per-component sqrt and pow, so the
// expected values are per-part sqrt and pow.
func TestComplexMathWiring(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := []complex128{complex(4, 9), complex(0.25, 16), complex(2, 1)}
	if opcore.ComplexMathFn("sqrt") == "" {
		for _, dt := range cxDtypes {
			_, err := ops.Sqrt(m, cxUpload(t, m, dt, x), nil)
			require.ErrorIs(t, err, core.ErrInvalid, "sqrt %v before the table has it", dt)
			require.ErrorContains(t, err, "complex math library")
		}
	}
	defer opcore.SetComplexMathFn("sqrt", "sqrt")()
	defer opcore.SetComplexMathFn("pow", "pow")()
	for _, dt := range cxDtypes {
		op, err := ops.Sqrt(m, cxUpload(t, m, dt, x), nil)
		got, y := runOp(t, op, err)
		require.Equal(t, dt, y.Dtype())
		want := make([]complex128, len(x))
		for i, v := range x {
			want[i] = complex(math.Sqrt(real(v)), math.Sqrt(imag(v)))
		}
		cxSame(t, dt, want, got, nil, 1, "sqrt stand-in")
	}
	// pow (GLSL's pow is float-only: complex64), with a float32 exponent
	// promoted to complex64 (imaginary part 0: pow(im, 0) = 1).
	e, err := tensor.FromSlice(m, []float32{2, 0.5, 3})
	require.NoError(t, err)
	defer e.Close()
	op, err := ops.Pow(m, cxUpload(t, m, tensor.Complex64, x), e, nil)
	got, _ := runOp(t, op, err)
	want := []complex128{complex(16, 1), complex(0.5, 1), complex(8, 1)}
	cxSame(t, tensor.Complex64, want, got, nil, 2, "pow stand-in")
	// An op outside the list never takes complex, whatever the table says.
	defer opcore.SetComplexMathFn("floor", "floor")()
	_, err = ops.Floor(m, cxUpload(t, m, tensor.Complex64, x), nil)
	require.ErrorIs(t, err, core.ErrInvalid)
}

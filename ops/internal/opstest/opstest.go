// Package opstest holds the test helpers the op packages (opcore, linalg,
// fft) share: uploads and read-backs of complex tensors, and rounding to a
// dtype's precision.
package opstest

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// CxRound rounds v to dt's precision (complex64: each part to float32).
func CxRound(dt tensor.Dtype, v complex128) complex128 {
	if dt == tensor.Complex64 {
		return complex128(complex64(v))
	}
	return v
}

// CxUpload makes a tensor of complex dtype dt holding vals.
func CxUpload(t *testing.T, m core.Owner, dt tensor.Dtype, vals []complex128, shape ...int) *tensor.Tensor {
	t.Helper()
	var x *tensor.Tensor
	var err error
	if dt == tensor.Complex64 {
		c := make([]complex64, len(vals))
		for i, v := range vals {
			c[i] = complex64(v)
		}
		x, err = tensor.FromSlice(m, c, shape...)
	} else {
		x, err = tensor.FromSlice(m, vals, shape...)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// ReadBack reads x (complex, float32, float64 or bool) as complex128
// values (bool: 0 or 1).
func ReadBack(t *testing.T, x *tensor.Tensor) []complex128 {
	t.Helper()
	b := make([]byte, x.Dtype().Size()*NumelOf(x.Shape()))
	require.NoError(t, x.ReadBytes(b))
	le := binary.LittleEndian
	f32 := func(i int) float64 { return float64(math.Float32frombits(le.Uint32(b[i:]))) }
	f64 := func(i int) float64 { return math.Float64frombits(le.Uint64(b[i:])) }
	n := NumelOf(x.Shape())
	out := make([]complex128, n)
	for i := range out {
		switch x.Dtype() {
		case tensor.Complex64:
			out[i] = complex(f32(8*i), f32(8*i+4))
		case tensor.Complex128:
			out[i] = complex(f64(16*i), f64(16*i+8))
		case tensor.Float32:
			out[i] = complex(f32(4*i), 0)
		case tensor.Float64:
			out[i] = complex(f64(8*i), 0)
		case tensor.Bool:
			out[i] = complex(float64(b[i]), 0)
		default:
			t.Fatalf("ReadBack: %v", x.Dtype())
		}
	}
	return out
}

// CxEps is the unit roundoff of dt's parts.
func CxEps(dt tensor.Dtype) float64 {
	if dt == tensor.Complex64 || dt == tensor.Float32 {
		return 0x1p-24
	}
	return 0x1p-53
}

func NumelOf(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// RoundTo rounds v to dt's precision (float16 through float32, which is
// at most one float16 ULP off the correctly rounded value).
func RoundTo(dt tensor.Dtype, v float64) float64 {
	switch dt {
	case tensor.Float16:
		return float64(tensor.HalfFrom(float32(v)).Float32())
	case tensor.Float32:
		return float64(float32(v))
	}
	return v
}

package opstest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/tensor"
)

// Tensors of any dtype made from and read back as float64 values.

// LinTensor makes a tensor of dtype dt and shape from vals (each exactly
// representable in dt).
func LinTensor(t *testing.T, m *vkflow.Manager, dt tensor.Dtype, vals []float64, shape []int) *tensor.Tensor {
	t.Helper()
	var x *tensor.Tensor
	var err error
	switch dt {
	case tensor.Float16:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) tensor.Half { return tensor.HalfFrom(float32(v)) }), shape...)
	case tensor.Float32:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) float32 { return float32(v) }), shape...)
	case tensor.Float64:
		x, err = tensor.FromSlice(m, vals, shape...)
	case tensor.Int8:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) int8 { return int8(v) }), shape...)
	case tensor.Uint8:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) uint8 { return uint8(v) }), shape...)
	case tensor.Int16:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) int16 { return int16(v) }), shape...)
	case tensor.Uint16:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) uint16 { return uint16(v) }), shape...)
	case tensor.Int32:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) int32 { return int32(v) }), shape...)
	case tensor.Uint32:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) uint32 { return uint32(v) }), shape...)
	case tensor.Int64:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) int64 { return int64(v) }), shape...)
	case tensor.Uint64:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) uint64 { return uint64(v) }), shape...)
	case tensor.Bool:
		x, err = tensor.FromSlice(m, Conv(vals, func(v float64) bool { return v != 0 }), shape...)
	default:
		t.Fatalf("no test tensor of dtype %v", dt)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x
}

func Conv[T any](vals []float64, f func(float64) T) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = f(v)
	}
	return out
}

func back[T any](t *testing.T, vals []T, err error, f func(T) float64) []float64 {
	t.Helper()
	require.NoError(t, err)
	return Conv2(vals, f)
}

func Conv2[T any](vals []T, f func(T) float64) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = f(v)
	}
	return out
}

// LinRead reads x back as float64 values.
func LinRead(t *testing.T, x *tensor.Tensor) []float64 {
	t.Helper()
	switch x.Dtype() {
	case tensor.Float16:
		v, err := x.Float16s()
		return back(t, v, err, func(h tensor.Half) float64 { return float64(h.Float32()) })
	case tensor.Float32:
		v, err := x.Float32s()
		return back(t, v, err, func(f float32) float64 { return float64(f) })
	case tensor.Float64:
		v, err := x.Float64s()
		return back(t, v, err, func(f float64) float64 { return f })
	case tensor.Int8:
		v, err := x.Int8s()
		return back(t, v, err, func(f int8) float64 { return float64(f) })
	case tensor.Uint8:
		v, err := x.Uint8s()
		return back(t, v, err, func(f uint8) float64 { return float64(f) })
	case tensor.Bool:
		v, err := x.Bools()
		return back(t, v, err, func(f bool) float64 {
			if f {
				return 1
			}
			return 0
		})
	case tensor.Int16:
		v, err := x.Int16s()
		return back(t, v, err, func(f int16) float64 { return float64(f) })
	case tensor.Uint16:
		v, err := x.Uint16s()
		return back(t, v, err, func(f uint16) float64 { return float64(f) })
	case tensor.Int32:
		v, err := x.Int32s()
		return back(t, v, err, func(f int32) float64 { return float64(f) })
	case tensor.Uint32:
		v, err := x.Uint32s()
		return back(t, v, err, func(f uint32) float64 { return float64(f) })
	case tensor.Int64:
		v, err := x.Int64s()
		return back(t, v, err, func(f int64) float64 { return float64(f) })
	case tensor.Uint64:
		v, err := x.Uint64s()
		return back(t, v, err, func(f uint64) float64 { return float64(f) })
	}
	t.Fatalf("no reader for dtype %v", x.Dtype())
	return nil
}

// LinRandom returns n values exact in dt: floats in [-1, 1) rounded to dt,
// integers over the dtype's small range (so products and sums Wrap for
// the 8-bit types).
func LinRandom(rng *rand.Rand, dt tensor.Dtype, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		switch dt {
		case tensor.Float16:
			out[i] = float64(tensor.HalfFrom(float32(rng.Float64()*2 - 1)).Float32())
		case tensor.Float32:
			out[i] = float64(float32(rng.Float64()*2 - 1))
		case tensor.Float64:
			out[i] = rng.Float64()*2 - 1
		case tensor.Bool:
			out[i] = float64(rng.IntN(2))
		case tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
			out[i] = float64(rng.IntN(200))
		default:
			out[i] = float64(rng.IntN(200) - 100)
		}
	}
	return out
}

// Wrap returns v as the integer dtype dt stores it (two's complement
// Wrap-around), v being an exact integer.
func Wrap(dt tensor.Dtype, v float64) float64 {
	i := int64(v)
	switch dt {
	case tensor.Int8:
		return float64(int8(i))
	case tensor.Uint8:
		return float64(uint8(i))
	case tensor.Int16:
		return float64(int16(i))
	case tensor.Uint16:
		return float64(uint16(i))
	case tensor.Int32:
		return float64(int32(i))
	case tensor.Uint32:
		return float64(uint32(i))
	case tensor.Uint64:
		return float64(uint64(i))
	}
	return float64(i)
}

var _ = math.Abs

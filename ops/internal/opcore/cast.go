package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/tensor"
)

func init() {
	Builtin("cast", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs("cast", in, 1); err != nil {
			return nil, err
		}
		if err := TooMany("cast", out, 1); err != nil {
			return nil, err
		}
		return Cast(o, in[0], at.Dtype, OutAt(out, 0))
	})
}

// Cast converts x to dtype dt element-wise, as NumPy's astype does; the
// output has x's shape (out nil allocates it). Every pair of dtypes
// works:
//
//   - float to float rounds to nearest even (float32 and float64 to
//     float16 overflow to ±Inf); NaN stays NaN;
//   - float to integer truncates toward zero. NaN, ±Inf and values outside
//     the target's range are undefined in NumPy too: here they give what
//     the device's conversion gives, which may differ between devices;
//   - integer to float rounds to nearest even (values past float16's
//     range become ±Inf);
//   - integer to integer keeps the low bits of the two's complement value,
//     sign-extended from a signed source and zero-extended from an
//     unsigned one (int8 -1 is uint16 65535; uint8 200 is int8 -56);
//   - anything to bool is x != 0 (NaN is true; a complex number is true
//     unless both parts are zero); bool to anything is 0 or 1;
//   - a real dtype, integer or bool to complex64 or complex128 gives the
//     value (converted as to float32 or float64) as the real part and +0
//     as the imaginary part; complex64 to complex128 is exact, complex128
//     to complex64 rounds each part;
//   - complex to a real or integer dtype is ErrInvalid: the array API
//     leaves it undefined and NumPy drops the imaginary part with a
//     warning; take Real or Abs first.
//
// Casting to x's own dtype copies. Registered as "cast" (Attrs.Dtype).
func Cast(o Owner, x *tensor.Tensor, dt tensor.Dtype, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "cast", x)
	if err != nil {
		return nil, err
	}
	if !dt.Valid() {
		return op.Fail(op.Errorf("target dtype %v is not a dtype", dt))
	}
	if err := castRefused(op, x.Dtype(), dt); err != nil {
		return op.Fail(err)
	}
	k := ewKernel{ins: []*tensor.Tensor{x}, outDt: dt, shape: x.Shape(), expr: castExpr(x.Dtype(), dt)}
	return op.elementwise(k, out)
}

// castExpr returns the GLSL expression converting a0, of src's compute
// type, to dst (its compute type, or float16_t).
func castExpr(src, dst tensor.Dtype) string {
	cin, cout := ComputeType(src), ComputeType(dst)
	switch {
	case dst.IsComplex() && !src.IsComplex():
		return fmt.Sprintf("%s(%s(a0), 0)", cout, ComputeType(dst.Real()))
	case dst == tensor.Bool:
		return fmt.Sprintf("!(a0 == %s(0)) ? 1u : 0u", cin)
	case cin == cout:
		return "a0"
	case dst == tensor.Float16 && src == tensor.Float64:
		return "float16_t(a0)" // one rounding, not two through float32
	case dst == tensor.Uint64 && (isSigned(src)):
		return "uint64_t(int64_t(a0))"
	case dst == tensor.Int64 && (isUnsigned(src) || src == tensor.Bool):
		return "int64_t(uint64_t(a0))"
	}
	return fmt.Sprintf("%s(a0)", cout)
}

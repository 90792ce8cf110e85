package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// Classification, sign and rounding: element-wise ops that are exact for
// every input (no rounding error anywhere), as the array API defines them.
// float16 computes in float32, which holds every float16 value exactly.

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"isnan": IsNaN, "isinf": IsInf, "isfinite": IsFinite, "signbit": Signbit, "sign": Sign,
		"floor": Floor, "ceil": Ceil, "trunc": Trunc, "round": Round,
	} {
		builtinUnary(name, f)
	}
}

// IsNaN gives true where x is NaN, as bool. Dtypes: every numeric dtype
// (integers are never NaN: false).
func IsNaN(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "isnan", x, out)
}

// IsInf gives true where x is +Inf or -Inf, as bool. Dtypes: every
// numeric dtype (integers: false).
func IsInf(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "isinf", x, out)
}

// IsFinite gives true where x is neither NaN nor ±Inf, as bool. Dtypes:
// every numeric dtype (integers: true).
func IsFinite(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "isfinite", x, out)
}

// Signbit gives true where x's sign bit is set, as bool: for -0.0, for
// negative numbers and -Inf, and for a NaN with its sign bit set. Dtypes:
// every numeric dtype (signed integers: x < 0; unsigned: false).
func Signbit(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "signbit", x, out)
}

// Sign gives -1, 0 or 1 by x's sign, in x's dtype; NaN stays NaN and both
// zeros give +0 (as NumPy's sign). Dtypes: every numeric dtype (unsigned
// integers: 0 or 1).
func Sign(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "sign", x, out)
}

// Floor rounds x toward -Inf element-wise; Ceil toward +Inf, Trunc toward
// zero, Round to the nearest integer with ties to even (2.5 is 2.0, -0.5
// is -0.0). Signed zeros, ±Inf and NaN are kept as they are, as the array
// API requires. Dtypes: every numeric dtype; integers are returned
// unchanged.
func Floor(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "floor", x, out)
}

// Ceil rounds x toward +Inf element-wise; see Floor.
func Ceil(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "ceil", x, out)
}

// Trunc rounds x toward zero element-wise; see Floor.
func Trunc(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "trunc", x, out)
}

// Round rounds x to the nearest integer, ties to even, element-wise; see
// Floor. Complex values have their real and imaginary parts rounded
// separately, as the array API says.
func Round(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "round", x, out)
}

// classExpr gives isnan's, isinf's and isfinite's expression: cond on
// floats, ints (true or false) on integers.
func classExpr(cond string, ints bool) exprFunc {
	return func(_ *Op, dt tensor.Dtype) (string, string, error) {
		if IsFloat(dt) {
			return "(" + cond + ") ? 1u : 0u", "", nil
		}
		if dt.IsComplex() {
			// Per part: isnan and isinf of either part, isfinite of both.
			join := " || "
			if ints {
				join = " && "
			}
			parts := func(p string) string { return strings.ReplaceAll(cond, "a0", "a0."+p) }
			return "((" + parts("x") + ")" + join + "(" + parts("y") + ")) ? 1u : 0u", "", nil
		}
		if ints {
			return "1u", "", nil
		}
		return "0u", "", nil
	}
}

// signBitOf returns GLSL for the sign bit (0u or 1u) of a float variable
// v of dt's compute type.
func signBitOf(dt tensor.Dtype, v string) string {
	if dt == tensor.Float64 {
		return fmt.Sprintf("(unpackDouble2x32(%s).y >> 31)", v)
	}
	return fmt.Sprintf("(floatBitsToUint(%s) >> 31)", v)
}

func signbitExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	switch {
	case IsFloat(dt):
		return signBitOf(dt, "a0"), "", nil
	case isSigned(dt):
		return fmt.Sprintf("a0 < %s(0) ? 1u : 0u", ComputeType(dt)), "", nil
	}
	return "0u", "", nil
}

func signExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	ct := ComputeType(dt)
	switch {
	case dt.IsComplex():
		return Cfn("csign", dt, "a0"), ComplexGLSL(dt), nil
	case IsFloat(dt):
		// A difference of 0s and 1s: +0 for both zeros (a chain of
		// selects between constants may become a copysign).
		return fmt.Sprintf("isnan(a0) ? a0 : (%[1]s(a0 > %[1]s(0)) - %[1]s(a0 < %[1]s(0)))", ct), "", nil
	case isSigned(dt):
		return fmt.Sprintf("a0 > %[1]s(0) ? %[1]s(1) : (a0 < %[1]s(0) ? %[1]s(-1) : %[1]s(0))", ct), "", nil
	}
	return fmt.Sprintf("a0 > %[1]s(0) ? %[1]s(1) : %[1]s(0)", ct), "", nil
}

// roundingExpr is floor's, ceil's, trunc's and round's expression: the
// GLSL function fn on floats, the identity on integers.
func roundingExpr(fn string) exprFunc {
	return func(_ *Op, dt tensor.Dtype) (string, string, error) {
		if IsFloat(dt) || dt.IsComplex() {
			return fn + "(a0)", "", nil // component-wise on a complex pair
		}
		return "a0", "", nil
	}
}

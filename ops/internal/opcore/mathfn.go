package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/tensor"
)

// The array API's exp/log family and float helpers: Expm1, Log1p, Log2,
// Log10, Sinh, Cosh, Asinh, Acosh, Atanh, Reciprocal (unary) and Hypot,
// Copysign, Logaddexp, Nextafter (binary, broadcast as Add). Dtypes:
// float16, float32 and float64; integers are ErrInvalid (Cast first).
// float16 and float32 compute in float32 (float16 rounds once on store),
// float64 in double, with our own GLSL (mathext_glsl.go), not the
// driver's: the special cases of the array API (signed zeros, ±Inf, NaN,
// the domain edges) are exact, and the rest is within the ULPs that
// docs/OPERATORS.md lists. Reciprocal, Copysign and Nextafter are exact.

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"expm1": Expm1, "log1p": Log1p, "log2": Log2, "log10": Log10, "sinh": Sinh, "cosh": Cosh,
		"asinh": Asinh, "acosh": Acosh, "atanh": Atanh, "reciprocal": Reciprocal,
	} {
		builtinUnary(name, f)
	}
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"hypot": Hypot, "copysign": Copysign, "logaddexp": Logaddexp, "nextafter": Nextafter,
	} {
		builtinBinary(name, f)
	}
}

// Expm1 computes e**x - 1, accurate near 0 (expm1(-0) is -0).
func Expm1(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "expm1", x, out) }

// Log1p computes log(1 + x), accurate near 0 (log1p(-1) is -Inf, below
// -1 NaN).
func Log1p(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "log1p", x, out) }

// Log2 computes the base-2 logarithm (exact for powers of 2).
func Log2(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "log2", x, out) }

// Log10 computes the base-10 logarithm.
func Log10(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "log10", x, out) }

// Sinh computes the hyperbolic sine.
func Sinh(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "sinh", x, out) }

// Cosh computes the hyperbolic cosine.
func Cosh(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "cosh", x, out) }

// Asinh computes the inverse hyperbolic sine.
func Asinh(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "asinh", x, out) }

// Acosh computes the inverse hyperbolic cosine (NaN below 1).
func Acosh(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "acosh", x, out) }

// Atanh computes the inverse hyperbolic tangent (±Inf at ±1, NaN past).
func Atanh(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "atanh", x, out) }

// Reciprocal computes 1/x (correctly rounded where the device divides
// so, as lavapipe does).
func Reciprocal(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "reciprocal", x, out) }

// Hypot computes sqrt(a*a + b*b) without overflow or underflow in
// between; +Inf if either is infinite, even with a NaN.
func Hypot(o Owner, a, b, out *tensor.Tensor) (*Op, error) { return binary(o, "hypot", a, b, out) }

// Copysign gives |a| with the sign bit of b (NaN and zero signs count).
func Copysign(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "copysign", a, b, out)
}

// Logaddexp computes log(e**a + e**b) without overflow.
func Logaddexp(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "logaddexp", a, b, out)
}

// Nextafter gives the next representable value of a's dtype after a
// toward b (b when a == b; NaN for a NaN), as C's nextafter; float16
// steps in float16. Subnormal results are exact on a device that keeps
// subnormals (lavapipe does when nothing computes with them).
func Nextafter(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "nextafter", a, b, out)
}

// extFn calls fn+"F" or fn+"D" from mathext_glsl.go over args.
func extFn(fn, args string) exprFunc {
	return func(_ *Op, dt tensor.Dtype) (string, string, error) {
		if dt == tensor.Float64 {
			return fn + "D(" + args + ")", mathExtF64, nil
		}
		return fn + "F(" + args + ")", mathExtF32, nil
	}
}

func reciprocalExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	return fmt.Sprintf("%s(1) / a0", ComputeType(dt)), "", nil
}

func copysignExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if dt == tensor.Float64 {
		return "copysignD(a0, a1)", bitsGLSLD, nil
	}
	return "copysignF(a0, a1)", bitsGLSLF, nil
}

func nextafterExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	switch dt {
	case tensor.Float64:
		return "nextafterD(a0, a1)", bitsGLSLD, nil
	case tensor.Float16:
		return "nextafterH(a0, a1)", bitsGLSLF, nil
	}
	return "nextafterF(a0, a1)", bitsGLSLF, nil
}

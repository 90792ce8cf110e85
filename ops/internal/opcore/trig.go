package opcore

import "github.com/vkflow/vkflow/tensor"

// The array API's trigonometric functions: Sin, Cos, Tan, Asin, Acos,
// Atan (unary) and Atan2 (binary, broadcast as Add). Dtypes: float16,
// float32 and float64; integers are ErrInvalid (Cast first). float16 and
// float32 compute in float32 (float16 rounds once on store), float64 in
// double, with our own GLSL (trig_glsl.go), not the driver's: the special
// cases of the array API (signed zeros, ±Inf, NaN, atan2's quadrants) are
// exact, every finite argument of sin, cos and tan is reduced exactly
// enough (Payne and Hanek past the moderate range), and the rest is within
// the ULPs that docs/OPERATORS.md lists.

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"sin": Sin, "cos": Cos, "tan": Tan, "asin": Asin, "acos": Acos, "atan": Atan,
	} {
		builtinUnary(name, f)
	}
	builtinBinary("atan2", Atan2)
}

// Sin computes the sine of x (radians); sin(-0) is -0, sin(±Inf) NaN.
func Sin(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "sin", x, out) }

// Cos computes the cosine of x (radians); cos(±Inf) is NaN.
func Cos(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "cos", x, out) }

// Tan computes the tangent of x (radians); tan(-0) is -0, tan(±Inf) NaN.
func Tan(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "tan", x, out) }

// Asin computes the inverse sine, in [-pi/2, pi/2] (NaN past ±1).
func Asin(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "asin", x, out) }

// Acos computes the inverse cosine, in [0, pi] (NaN past ±1; acos(1) is
// +0).
func Acos(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "acos", x, out) }

// Atan computes the inverse tangent, in [-pi/2, pi/2].
func Atan(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "atan", x, out) }

// Atan2 computes the angle of the point (b, a) (a the y coordinate, as
// C's atan2(y, x)), in [-pi, pi]; the signs of zeros pick the quadrant
// (atan2(+0, -0) is pi, atan2(-0, +0) is -0), and the infinities give
// multiples of pi/4.
func Atan2(o Owner, a, b, out *tensor.Tensor) (*Op, error) { return binary(o, "atan2", a, b, out) }

// trigFn calls fn+"F" or fn+"D" from trig_glsl.go over args.
func trigFn(fn, args string) exprFunc {
	return func(_ *Op, dt tensor.Dtype) (string, string, error) {
		if dt == tensor.Float64 {
			return fn + "D(" + args + ")", trigF64, nil
		}
		return fn + "F(" + args + ")", trigF32, nil
	}
}

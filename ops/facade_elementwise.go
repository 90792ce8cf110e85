// The ops API over its core, ops/internal/opcore: types are aliases, functions forward.

package ops

import (
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// Abs computes |x| element-wise. Dtypes: every numeric dtype; unsigned
// integers are unchanged, and the most negative signed integer stays as it
// is (it wraps, as in NumPy). For complex64 and complex128 it is the
// modulus, as float32 or float64 (see complex.go).
func Abs(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Abs(o, x, out)
}

// Acos computes the inverse cosine, in [0, pi] (NaN past ±1; acos(1) is
// +0).
func Acos(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Acos(o, x, out)
}

// Acosh computes the inverse hyperbolic cosine (NaN below 1).
func Acosh(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Acosh(o, x, out)
}

// Add computes a + b element-wise with broadcasting. Dtypes: every
// numeric dtype (integers wrap).
func Add(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Add(o, a, b, out)
}

// Apply is the element-wise op called name (as registered: "add", "exp",
// "less", "where", ...) over args.
func Apply(name string, args ...Expr) Expr {
	return opcore.Apply(name, args...)
}

// AsType is e cast to dt, as Cast.
func AsType(e Expr, dt tensor.Dtype) Expr {
	return opcore.AsType(e, dt)
}

// Asin computes the inverse sine, in [-pi/2, pi/2] (NaN past ±1).
func Asin(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Asin(o, x, out)
}

// Asinh computes the inverse hyperbolic sine.
func Asinh(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Asinh(o, x, out)
}

// Atan computes the inverse tangent, in [-pi/2, pi/2].
func Atan(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Atan(o, x, out)
}

// Atan2 computes the angle of the point (b, a) (a the y coordinate, as
// C's atan2(y, x)), in [-pi, pi]; the signs of zeros pick the quadrant
// (atan2(+0, -0) is pi, atan2(-0, +0) is -0), and the infinities give
// multiples of pi/4.
func Atan2(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Atan2(o, a, b, out)
}

// Atanh computes the inverse hyperbolic tangent (±Inf at ±1, NaN past).
func Atanh(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Atanh(o, x, out)
}

// BitwiseAnd computes a & b element-wise with broadcasting. Dtypes: the
// integer dtypes and bool.
func BitwiseAnd(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.BitwiseAnd(o, a, b, out)
}

// BitwiseInvert computes ~x element-wise (NumPy's invert): every bit
// flipped, so -x-1 for signed integers and max-x for unsigned ones. For
// bool it is logical not. Dtypes: the integer dtypes and bool.
func BitwiseInvert(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.BitwiseInvert(o, x, out)
}

// BitwiseLeftShift computes a << b element-wise with broadcasting, as
// NumPy's left_shift: bits shifted past the dtype's width are lost (int8
// 1 << 7 is -128), and a count at or past the width, or negative, gives
// 0 (NumPy compares the count as unsigned). Dtypes: the integer dtypes,
// promoted as for every binary op (ResultType).
func BitwiseLeftShift(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.BitwiseLeftShift(o, a, b, out)
}

// BitwiseOr computes a | b element-wise with broadcasting. Dtypes: the
// integer dtypes and bool.
func BitwiseOr(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.BitwiseOr(o, a, b, out)
}

// BitwiseRightShift computes a >> b element-wise with broadcasting, as
// NumPy's right_shift: arithmetic for signed dtypes, logical for unsigned
// ones; a count at or past the dtype's width, or negative, gives 0, or -1
// for a negative signed a. Dtypes: the integer dtypes.
func BitwiseRightShift(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.BitwiseRightShift(o, a, b, out)
}

// BitwiseXor computes a ^ b element-wise with broadcasting. Dtypes: the
// integer dtypes and bool.
func BitwiseXor(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.BitwiseXor(o, a, b, out)
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
	return opcore.Cast(o, x, dt, out)
}

// Ceil rounds x toward +Inf element-wise; see Floor.
func Ceil(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Ceil(o, x, out)
}

// Clip limits x to [lo, hi] element-wise: minimum(maximum(x, lo), hi), as
// NumPy's clip, so lo > hi gives hi everywhere and a NaN in x stays NaN.
// A nil bound is unbounded. Dtypes: every numeric dtype. A bound must be
// representable in x's dtype: an integral value within the integer
// dtype's range, or for floats any value (rounded to the nearest float16
// or float32; one past the finite range becomes ±Inf); a NaN bound is
// ErrInvalid.
func Clip(o Owner, x *tensor.Tensor, lo *float64, hi *float64, out *tensor.Tensor) (*Op, error) {
	return opcore.Clip(o, x, lo, hi, out)
}

// Conj gives the complex conjugate of x (the imaginary part negated, its
// sign bit flipped: conj of 1+0i is 1-0i). For a real dtype it copies x.
func Conj(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Conj(o, x, out)
}

// Copysign gives |a| with the sign bit of b (NaN and zero signs count).
func Copysign(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Copysign(o, a, b, out)
}

// Cos computes the cosine of x (radians); cos(±Inf) is NaN.
func Cos(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Cos(o, x, out)
}

// Cosh computes the hyperbolic cosine.
func Cosh(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Cosh(o, x, out)
}

// Div computes a / b element-wise with broadcasting (true division, IEEE:
// x/0 is ±Inf or NaN). Dtypes: floats only; Cast integers to a float
// dtype first.
func Div(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Div(o, a, b, out)
}

// Equal computes a == b element-wise with broadcasting, as bool.
func Equal(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Equal(o, a, b, out)
}

// Exp computes e**x element-wise (within 2 ULPs; see mathglsl.go).
// Dtypes: floats; integers are ErrInvalid (Cast first).
func Exp(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Exp(o, x, out)
}

// Expm1 computes e**x - 1, accurate near 0 (expm1(-0) is -0).
func Expm1(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Expm1(o, x, out)
}

// Expr is an element-wise expression over tensors, which Fuse compiles
// into one kernel: one dispatch that reads each input once and writes the
// result once, instead of one dispatch and one intermediate tensor per op.
//
//	// y = sigmoid(a*w + b) in one pass
//	e := ops.Apply("sigmoid", ops.Apply("add", ops.Apply("mul", ops.Input(a), ops.Input(w)), ops.Input(b)))
//	op, err := ops.Fuse(mgr, e, nil)
//
// Every step follows the rules of the op of that name (dtypes,
// broadcasting, NaN), and rounds or wraps to its dtype as the unfused op
// would store it, so a fused expression computes exactly what the chain of
// ops does. Building an Expr checks nothing; Fuse reports what is wrong.
// An Expr may use a sub-expression several times; it is computed once.
type Expr = opcore.Expr

// Floor rounds x toward -Inf element-wise; Ceil toward +Inf, Trunc toward
// zero, Round to the nearest integer with ties to even (2.5 is 2.0, -0.5
// is -0.0). Signed zeros, ±Inf and NaN are kept as they are, as the array
// API requires. Dtypes: every numeric dtype; integers are returned
// unchanged.
func Floor(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Floor(o, x, out)
}

// FloorDivide computes a // b element-wise with broadcasting, as NumPy's
// floor_divide. Dtypes: every numeric dtype.
//
// Integers round the quotient toward -Inf; b = 0 gives 0 (NumPy gives 0
// and warns; here there is no warning), and the most negative signed
// integer divided by -1 wraps to itself, as in NumPy.
//
// Floats follow NumPy's algorithm (npy_divmod): m = fmod(a, b) (exact),
// d = (a - m) / b, less 1 where m is nonzero and its sign differs from
// b's, then floor(d), plus 1 where d - floor(d) > 0.5; a zero d gives a
// zero with the sign of a/b, and b = ±0 gives a/b (±Inf, or NaN for 0/0
// and NaN/0). So Inf // x and x // NaN are NaN, 1 // Inf is 0 and -1 //
// Inf is -1, as in NumPy. float16 and float32 compute in float32 (float16
// rounds once on store), as NumPy's float16 loop does. The results are
// NumPy's bit for bit (signed zeros included; a NaN's sign bit may
// differ) where the device divides float32 and float64 correctly rounded,
// as lavapipe does (Vulkan allows 2.5 ULPs for a float32 division, which
// can move a quotient past 2^24 by an integer), and keeps subnormal
// numbers (a device that flushes them to zero gives 0 where they occur).
func FloorDivide(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.FloorDivide(o, a, b, out)
}

// Fuse prepares e as one element-wise kernel. Its inputs are the distinct
// tensors of e's Input leaves, in the order first met (depth first, left
// to right); the output has their broadcast shape and e's dtype (out nil
// allocates it). The Op is named "fuse". Each input and the output is a
// storage buffer of the kernel: the device's
// maxPerStageDescriptorStorageBuffers bounds the number of distinct inputs
// (pipeline creation fails past it).
func Fuse(o Owner, e Expr, out *tensor.Tensor) (*Op, error) {
	return opcore.Fuse(o, e, out)
}

// Greater computes a > b element-wise with broadcasting, as bool.
func Greater(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Greater(o, a, b, out)
}

// GreaterEqual computes a >= b element-wise with broadcasting, as bool.
func GreaterEqual(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.GreaterEqual(o, a, b, out)
}

// Hypot computes sqrt(a*a + b*b) without overflow or underflow in
// between; +Inf if either is infinite, even with a NaN.
func Hypot(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Hypot(o, a, b, out)
}

// Imag gives the imaginary part of x: for complex64 a float32 tensor, for
// complex128 a float64 one. For a real dtype it gives zeros of x's dtype.
func Imag(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Imag(o, x, out)
}

// Input is the expression reading tensor t.
func Input(t *tensor.Tensor) Expr {
	return opcore.Input(t)
}

// IsFinite gives true where x is neither NaN nor ±Inf, as bool. Dtypes:
// every numeric dtype (integers: true).
func IsFinite(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.IsFinite(o, x, out)
}

// IsInf gives true where x is +Inf or -Inf, as bool. Dtypes: every
// numeric dtype (integers: false).
func IsInf(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.IsInf(o, x, out)
}

// IsNaN gives true where x is NaN, as bool. Dtypes: every numeric dtype
// (integers are never NaN: false).
func IsNaN(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.IsNaN(o, x, out)
}

// Less computes a < b element-wise with broadcasting, as bool.
func Less(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Less(o, a, b, out)
}

// LessEqual computes a <= b element-wise with broadcasting, as bool.
func LessEqual(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.LessEqual(o, a, b, out)
}

// Log computes the natural logarithm element-wise (log 0 = -Inf, log of a
// negative number is NaN; within 2 ULPs). Dtypes: floats; integers are
// ErrInvalid (Cast first).
func Log(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Log(o, x, out)
}

// Log10 computes the base-10 logarithm.
func Log10(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Log10(o, x, out)
}

// Log1p computes log(1 + x), accurate near 0 (log1p(-1) is -Inf, below
// -1 NaN).
func Log1p(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Log1p(o, x, out)
}

// Log2 computes the base-2 logarithm (exact for powers of 2).
func Log2(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Log2(o, x, out)
}

// Logaddexp computes log(e**a + e**b) without overflow.
func Logaddexp(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Logaddexp(o, a, b, out)
}

// LogicalAnd computes a AND b element-wise with broadcasting. Dtypes:
// bool.
func LogicalAnd(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.LogicalAnd(o, a, b, out)
}

// LogicalNot computes NOT x element-wise. Dtypes: bool.
func LogicalNot(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.LogicalNot(o, x, out)
}

// LogicalOr computes a OR b element-wise with broadcasting. Dtypes: bool.
func LogicalOr(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.LogicalOr(o, a, b, out)
}

// LogicalXor computes a XOR b element-wise with broadcasting. Dtypes:
// bool.
func LogicalXor(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.LogicalXor(o, a, b, out)
}

// Maximum computes the element-wise maximum with broadcasting; a NaN in
// either input gives NaN, as NumPy's maximum. Dtypes: every numeric dtype.
func Maximum(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Maximum(o, a, b, out)
}

// Minimum computes the element-wise minimum with broadcasting; a NaN in
// either input gives NaN, as NumPy's minimum. Dtypes: every numeric dtype.
func Minimum(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Minimum(o, a, b, out)
}

// Mul computes a * b element-wise with broadcasting. Dtypes: every
// numeric dtype (integers wrap).
func Mul(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Mul(o, a, b, out)
}

// Neg computes -x element-wise. Dtypes: every numeric dtype, complex
// included (both parts negated); integers wrap, unsigned ones included
// (-1 as uint8 is 255), as in NumPy.
func Neg(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Neg(o, x, out)
}

// Nextafter gives the next representable value of a's dtype after a
// toward b (b when a == b; NaN for a NaN), as C's nextafter; float16
// steps in float16. Subnormal results are exact on a device that keeps
// subnormals (lavapipe does when nothing computes with them).
func Nextafter(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Nextafter(o, a, b, out)
}

// NotEqual computes a != b element-wise with broadcasting, as bool; true
// where either is NaN.
func NotEqual(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.NotEqual(o, a, b, out)
}

// Pow computes a ** b element-wise with broadcasting. Dtypes: every
// numeric dtype.
//
// Floats follow C's pow: pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN;
// a negative base with an integral exponent gives the signed result, with
// a non-integral one NaN; pow(±0, y) is Inf for y < 0 and 0 for y > 0,
// negative for -0 and an odd integral y; pow(±Inf, y) likewise. Other
// results are exp(y*log|x|): for float16 and float32 computed in double
// (within 1 ULP of float32), or, on a device without shaderFloat64, the
// driver's exp2(y*log2|x|) in float32, whose error grows with
// |y*log2|x||; for float64 with log|x| and the product in double-double
// arithmetic (within 1 ULP; see powF64).
//
// Integers multiply by repeated squaring (at most 64 steps) and wrap as
// NumPy does. NumPy refuses a negative integer exponent; here it gives
// what the real result truncates to: 1 for a base of 1, ±1 for a base of
// -1 (by the exponent's parity), and 0 for every other base (0 included).
func Pow(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Pow(o, a, b, out)
}

// Real gives the real part of x: for complex64 a float32 tensor, for
// complex128 a float64 one. For a real dtype it copies x.
func Real(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Real(o, x, out)
}

// Reciprocal computes 1/x (correctly rounded where the device divides
// so, as lavapipe does).
func Reciprocal(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Reciprocal(o, x, out)
}

// Relu computes max(x, 0) element-wise; relu(NaN) is NaN. Dtypes: every
// numeric dtype (unsigned integers are unchanged).
func Relu(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Relu(o, x, out)
}

// Remainder computes a % b element-wise with broadcasting, as NumPy's
// remainder (Python's %): the result has b's sign. Dtypes: every numeric
// dtype.
//
// Integers: x % 0 is 0 (as NumPy, without its warning), and x % -1 is 0
// for every x, the most negative integer included. Floats: m = fmod(a, b)
// (exact), plus b where m is nonzero and its sign differs from b's; a zero
// m becomes a zero with b's sign. x % ±0, ±Inf % y and x % NaN are NaN,
// x % Inf is x for x >= 0 and Inf for x < 0 (NumPy's results). float16
// and float32 compute in float32; bit-exact with NumPy under the same
// conditions as FloorDivide.
func Remainder(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Remainder(o, a, b, out)
}

// ResultType returns the dtype the array API standard promotes a and b to,
// and false when the standard defines none (see above).
func ResultType(a tensor.Dtype, b tensor.Dtype) (tensor.Dtype, bool) {
	return opcore.ResultType(a, b)
}

// Round rounds x to the nearest integer, ties to even, element-wise; see
// Floor.
func Round(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Round(o, x, out)
}

// Scalar is a constant. It takes the dtype of the other operands of the
// op it is given to (which must not all be scalars), and must be
// representable in it (as Clip's bounds).
func Scalar(v float64) Expr {
	return opcore.Scalar(v)
}

// Sigmoid computes 1/(1+e**-x) element-wise (e**x/(1+e**x) for x < 0,
// so that tiny results keep their precision; within 2 ULPs). Dtypes:
// floats; integers are ErrInvalid (Cast first).
func Sigmoid(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Sigmoid(o, x, out)
}

// Sign gives -1, 0 or 1 by x's sign, in x's dtype; NaN stays NaN and both
// zeros give +0 (as NumPy's sign). Dtypes: every numeric dtype (unsigned
// integers: 0 or 1).
func Sign(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Sign(o, x, out)
}

// Signbit gives true where x's sign bit is set, as bool: for -0.0, for
// negative numbers and -Inf, and for a NaN with its sign bit set. Dtypes:
// every numeric dtype (signed integers: x < 0; unsigned: false).
func Signbit(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Signbit(o, x, out)
}

// Sin computes the sine of x (radians); sin(-0) is -0, sin(±Inf) NaN.
func Sin(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Sin(o, x, out)
}

// Sinh computes the hyperbolic sine.
func Sinh(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Sinh(o, x, out)
}

// Sqrt computes the square root element-wise (NaN for negative x).
// Dtypes: float16, float32 and float64; integers are ErrInvalid (Cast
// first).
func Sqrt(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Sqrt(o, x, out)
}

// Square computes x*x element-wise. Dtypes: every numeric dtype, complex
// included (integers wrap).
func Square(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Square(o, x, out)
}

// Sub computes a - b element-wise with broadcasting. Dtypes: every
// numeric dtype (integers wrap).
func Sub(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Sub(o, a, b, out)
}

// Tan computes the tangent of x (radians); tan(-0) is -0, tan(±Inf) NaN.
func Tan(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Tan(o, x, out)
}

// Tanh computes the hyperbolic tangent element-wise (within 4 ULPs).
// Dtypes: floats; integers are ErrInvalid (Cast first).
func Tanh(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Tanh(o, x, out)
}

// Trunc rounds x toward zero element-wise; see Floor.
func Trunc(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Trunc(o, x, out)
}

// Where computes cond ? a : b element-wise, with cond, a and b broadcast
// together. cond must be bool; a and b have any dtype, promoted as for
// the binary ops (ResultType), which is the output's.
func Where(o Owner, cond *tensor.Tensor, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Where(o, cond, a, b, out)
}

package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// Complex dtypes in the element-wise ops. complex64 and complex128 are
// vec2 and dvec2 (real, imaginary) in buffers and in arithmetic, so add,
// subtract, negate, compare for equality, select (Where) and copy are
// GLSL's own vector operations; what differs from the real dtypes is
// here:
//
//   - multiply is (ac - bd) + (ad + bc)i, as NumPy and Go compute it
//     (no recovery of infinities from NaN products);
//   - divide is Smith's algorithm (the larger part of the divisor is
//     divided out first, so that no intermediate overflows or underflows
//     needlessly), then C99 Annex G's recovery of infinities and zeros
//     where both parts came out NaN (x/0 for x ≠ 0 is infinite; an
//     infinite numerator over a finite divisor is infinite; a finite one
//     over an infinite divisor is zero), as Go's complex division;
//   - abs is hypot(re, im): scaled by the larger part, so it overflows
//     only when the result does; ±Inf in either part gives +Inf, else NaN
//     in either part NaN. Its result has the real dtype (float32 for
//     complex64, float64 for complex128), as do real and imag;
//   - sign is z/|z|, 0 for 0, NaN + NaN i when either part is NaN;
//   - isnan is true when either part is NaN, isinf when either part is
//     infinite, isfinite when both parts are finite (the array API's
//     rules);
//   - the transcendental functions take complex dtypes where the complex
//     math library has them (complexMathFns).
//
// Ordering ops (less, maximum, floor, ...) refuse complex dtypes: complex
// numbers have no order.

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"square": Square, "real": Real, "imag": Imag, "conj": Conj,
	} {
		builtinUnary(name, f)
	}
}

// Square computes x*x element-wise. Dtypes: every numeric dtype, complex
// included (integers wrap).
func Square(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "square", x, out) }

// Real gives the real part of x: for complex64 a float32 tensor, for
// complex128 a float64 one. For a real dtype it copies x.
func Real(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "real", x, out) }

// Imag gives the imaginary part of x: for complex64 a float32 tensor, for
// complex128 a float64 one. For a real dtype it gives zeros of x's dtype.
func Imag(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "imag", x, out) }

// Conj gives the complex conjugate of x (the imaginary part negated, its
// sign bit flipped: conj of 1+0i is 1-0i). For a real dtype it copies x.
func Conj(o Owner, x, out *tensor.Tensor) (*Op, error) { return unary(o, "conj", x, out) }

// complexMathOps are the element-wise ops that compute on complex dtypes
// through complexMathFns, where that table has them.
var complexMathOps = map[string]bool{
	"exp": true, "expm1": true, "log": true, "log1p": true, "log2": true, "log10": true, "sqrt": true,
	"sin": true, "cos": true, "tan": true, "sinh": true, "cosh": true, "tanh": true,
	"asin": true, "acos": true, "atan": true, "asinh": true, "acosh": true, "atanh": true, "pow": true,
}

// ewExpr returns the expression and helpers of the element-wise op name
// for dtype dt, or the op's error for a dtype it does not take.
func ewExpr(op *Op, name string, def ewDef, dt tensor.Dtype) (string, string, error) {
	if dt.IsComplex() && !def.class.has(dt) && complexMathOps[name] {
		if fn := complexMathFns[name]; fn != "" {
			args := "a0"
			if def.arity == 2 {
				args = "a0, a1"
			}
			return fn + "(" + args + ")", complexMathGLSL(dt), nil
		}
		return "", "", op.Errorf("dtype %v is not supported yet: the complex %s is not in the complex math library (supported: %s)",
			dt, name, def.class)
	}
	if !def.class.has(dt) {
		return "", "", op.Unsupported(dt, def.class.String())
	}
	return def.expr(op, dt)
}

// realResult are the ops whose result on a complex dtype has its real
// dtype.
var realResult = map[string]bool{"abs": true, "real": true, "imag": true}

// ewOutDtype returns the output dtype of element-wise op name over dt.
func ewOutDtype(name string, def ewDef, dt tensor.Dtype) tensor.Dtype {
	switch {
	case def.bool:
		return tensor.Bool
	case realResult[name]:
		return dt.Real()
	}
	return dt
}

// castRefused returns the error for a cast from complex to a real dtype.
func castRefused(op *Op, src, dst tensor.Dtype) error {
	if src.IsComplex() && !dst.IsComplex() && dst != tensor.Bool {
		return op.Errorf("a cast from %v to %v is not defined (the array API leaves it undefined, and NumPy drops the imaginary part with a warning): take real or abs first", src, dst)
	}
	return nil
}

// complexResult is ResultType where a or b (different dtypes) is
// complex: with a complex or float dtype, the complex dtype whose parts
// hold both; with an integer or bool, none.
func complexResult(a, b tensor.Dtype) (tensor.Dtype, bool) {
	for _, d := range []tensor.Dtype{a, b} {
		if !d.IsComplex() && !IsFloat(d) {
			return 0, false
		}
	}
	if a.Real() == tensor.Float64 || b.Real() == tensor.Float64 {
		return tensor.Complex128, true
	}
	return tensor.Complex64, true
}

// complexGLSLSrc defines, over $C (vec2 or dvec2) and its part type $T,
// the complex arithmetic the element-wise ops call: suffix $S is F for
// complex64, D for complex128. Products are precise, so that the driver
// does not fuse them into FMAs and the results equal NumPy's and Go's.
const complexGLSLSrc = `$C cmul$S($C a, $C b) {
	precise $T re = a.x * b.x - a.y * b.y;
	precise $T im = a.x * b.y + a.y * b.x;
	return $C(re, im);
}
$T cinf$S() { return $T(1.0) / $T(0.0); }
$T cabs$S($C z) {
	$T x = abs(z.x), y = abs(z.y);
	if (isinf(x) || isinf(y)) return cinf$S();
	if (isnan(x) || isnan(y)) return x + y;
	$T m = max(x, y), s = min(x, y);
	if (s == $T(0.0)) return m;
	$T r = s / m;
	return m * sqrt($T(1.0) + r * r);
}
// Smith's division, then C99 G.5.1's recovery where both parts are NaN.
$C cdiv$S($C n, $C d) {
	precise $T e, f;
	if (abs(d.x) >= abs(d.y)) {
		precise $T r = d.y / d.x;
		precise $T den = d.x + r * d.y;
		e = (n.x + n.y * r) / den;
		f = (n.y - n.x * r) / den;
	} else {
		precise $T r = d.x / d.y;
		precise $T den = d.y + r * d.x;
		e = (n.x * r + n.y) / den;
		f = (n.y * r - n.x) / den;
	}
	if (isnan(e) && isnan(f)) {
		$T a = n.x, b = n.y, c = d.x, g = d.y;
		bool nfin = !isinf(a) && !isnan(a) && !isinf(b) && !isnan(b);
		bool dfin = !isinf(c) && !isnan(c) && !isinf(g) && !isnan(g);
		if (c == $T(0.0) && g == $T(0.0) && (!isnan(a) || !isnan(b))) {
			$T s = (CSIGN$S(c) ? -cinf$S() : cinf$S());
			e = s * a;
			f = s * b;
		} else if ((isinf(a) || isinf(b)) && dfin) {
			a = (CSIGN$S(a) ? -1.0 : 1.0) * (isinf(a) ? $T(1.0) : $T(0.0));
			b = (CSIGN$S(b) ? -1.0 : 1.0) * (isinf(b) ? $T(1.0) : $T(0.0));
			e = cinf$S() * (a * c + b * g);
			f = cinf$S() * (b * c - a * g);
		} else if ((isinf(c) || isinf(g)) && nfin) {
			c = (CSIGN$S(c) ? -1.0 : 1.0) * (isinf(c) ? $T(1.0) : $T(0.0));
			g = (CSIGN$S(g) ? -1.0 : 1.0) * (isinf(g) ? $T(1.0) : $T(0.0));
			e = $T(0.0) * (a * c + b * g);
			f = $T(0.0) * (b * c - a * g);
		}
	}
	return $C(e, f);
}
$C csign$S($C z) {
	if (isnan(z.x) || isnan(z.y)) return $C(0.0 / $T(0.0));
	if (z.x == $T(0.0) && z.y == $T(0.0)) return $C(0.0);
	return z / cabs$S(z);
}
`

// ComplexGLSL returns the complex helpers for dt (complex64 or
// complex128).
func ComplexGLSL(dt tensor.Dtype) string {
	c, t, s, sign := "vec2", "float", "F", "(floatBitsToUint(v) >> 31) != 0u"
	if dt == tensor.Complex128 {
		c, t, s, sign = "dvec2", "double", "D", "(unpackDouble2x32(v).y >> 31) != 0u"
	}
	src := strings.NewReplacer("$C", c, "$T", t, "$S", s).Replace(complexGLSLSrc)
	signFn := fmt.Sprintf("bool CSIGN%[1]s(%[2]s v) { return %[3]s; }\n", s, t, sign)
	return Guard("COMPLEX_"+s, signFn+src)
}

// Cfn returns the call of complex helper fn (cmul, cdiv, cabs, csign)
// for complex dt over args.
func Cfn(fn string, dt tensor.Dtype, args string) string {
	s := "F"
	if dt == tensor.Complex128 {
		s = "D"
	}
	return fn + s + "(" + args + ")"
}

func mulExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if dt.IsComplex() {
		return Cfn("cmul", dt, "a0, a1"), ComplexGLSL(dt), nil
	}
	return "a0 * a1", "", nil
}

func divExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if dt.IsComplex() {
		return Cfn("cdiv", dt, "a0, a1"), ComplexGLSL(dt), nil
	}
	return "a0 / a1", "", nil
}

func squareExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if dt.IsComplex() {
		return Cfn("cmul", dt, "a0, a0"), ComplexGLSL(dt), nil
	}
	return "a0 * a0", "", nil
}

func realExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if dt.IsComplex() {
		return "a0.x", "", nil
	}
	return "a0", "", nil
}

func imagExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if dt.IsComplex() {
		return "a0.y", "", nil
	}
	return ComputeType(dt) + "(0)", "", nil
}

func conjExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if dt.IsComplex() {
		return ComputeType(dt) + "(a0.x, -a0.y)", "", nil
	}
	return "a0", "", nil
}

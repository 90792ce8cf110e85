package opcore

import (
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// The complex transcendental functions of the element-wise ops, in GLSL:
// complex64 as vec2 (real, imaginary) computed in float, complex128 as
// dvec2 computed in double, on top of the real functions of mathglsl.go,
// mathext_glsl.go and trig_glsl.go of the same precision (GLSL has no
// double exp, log or sin). Each function is written once over a type
// (complexMathSrc and its siblings) and instantiated for float and double;
// the public names are overloads (cexp(vec2) and cexp(dvec2)), so that a
// kernel with both dtypes can hold both.
//
// Special values follow the array API standard (2023.12), which follows
// C99's Annex G: the special cases come first and are exact, signed zeros
// included, and the branch cuts are C99's, the sign of a zero imaginary
// part choosing the side. Finite arguments avoid needless overflow,
// underflow and cancellation:
//   - log|z| is log(max) + log1p((min/max)^2)/2, and near |z| = 1 it is
//     log1p(x^2 + y^2 - 1)/2 with the squares and the sum in double length
//     (Dekker's products, Knuth's two-sum); log1p(z) sums 2x + x^2 + y^2
//     the same way;
//   - exp, sinh and cosh split e^x into two halves past the overflow
//     threshold, so e^x cos y stays finite when it is; expm1's real part is
//     expm1(x) cos y - 2 sin^2(y/2);
//   - sqrt is Kahan's (|x| + |z|)/2 form, scaled by powers of 4 near the
//     overflow and underflow thresholds;
//   - tanh is Kahan's formula through tan y and sinh x, and sign(x) + i 4
//     sin y cos y e^(-2|x|) past |x| = 10 (float) or 22 (double);
//   - asin, acos, asinh and acosh are Hull, Fairgrieve and Tang's
//     algorithm (ACM TOMS 23(3), 1997), which is accurate in every region
//     of the plane, with log(2z) for |z| past 1/eps and z for |z| below
//     sqrt(eps); atanh is log1p(4x / ((1-x)^2 + y^2))/4 + i atan2(2y,
//     (1-x)(1+x) - y^2)/2, 1/z past 1/eps;
//   - sin, cos, tan, asin and atan are their hyperbolic twins rotated
//     (sin z = -i sinh(iz)), as C99 defines them;
//   - pow(z, w) is 1 for w = 0, repeated squaring for integral real w with
//     |w| <= 64 (exact for small Gaussian integers), else exp(w log z).

// complexMathFns names, for each element-wise op that computes on complex
// dtypes through a function of complexMathGLSL, that GLSL function. The
// functions take and return vec2 (complex64: real, imaginary) or dvec2
// (complex128); "pow" takes two arguments.
var complexMathFns = map[string]string{
	"exp": "cexp", "expm1": "cexpm1", "log": "clog", "log1p": "clog1p", "log2": "clog2", "log10": "clog10",
	"sqrt": "csqrt", "sin": "csin", "cos": "ccos", "tan": "ctan", "sinh": "csinh", "cosh": "ccosh",
	"tanh": "ctanh", "asin": "casin", "acos": "cacos", "atan": "catan", "asinh": "casinh",
	"acosh": "cacosh", "atanh": "catanh", "pow": "cpow",
}

// complexMathGLSL returns the GLSL that defines the functions of
// complexMathFns for complex dtype dt (and the real functions they call),
// or "" for another dtype. It needs nothing but a kernel's header.
func complexMathGLSL(dt tensor.Dtype) string {
	switch dt {
	case tensor.Complex64:
		return complexMathF32
	case tensor.Complex128:
		return complexMathF64
	}
	return ""
}

var (
	complexMathF32 = mathExtF32 + trigF32 + Guard("CMATH_F32", instantiateComplex(false))
	complexMathF64 = mathExtF64 + trigF64 + Guard("CMATH_F64", instantiateComplex(true))
)

// complexConsts are the templates' constants: float, double.
var complexConsts = [][3]string{
	{"$PIO2_LO", "-4.371139e-08", "6.123233995736766e-17lf"}, // pi/2 - float(pi/2)
	{"$PIO2", "1.57079632679489661923", "1.57079632679489661923lf"},
	{"$PIO4", "0.785398163397448309616", "0.785398163397448309616lf"},
	{"$P3O4", "2.35619449019234492885", "2.35619449019234492885lf"},
	{"$PI_LO", "-8.742278e-08", "1.2246467991473532e-16lf"}, // pi - float(pi)
	{"$PI", "3.14159265358979323846", "3.14159265358979323846lf"},
	{"$LN2", "0.693147180559945309417", "0.693147180559945309417lf"},
	{"$INVLN2", "1.44269504088896340736", "1.44269504088896340736lf"},
	{"$INVLN10", "0.434294481903251827651", "0.434294481903251827651lf"},
	{"$EXPMAX", "88.72284", "709.782712893384lf"},                // e**x overflows past it
	{"$EXPM1BIG", "20.0", "40.0lf"},                              // e**x - 1 rounds as e**x past it
	{"$TANHBIG", "10.0", "22.0lf"},                               // tanh x rounds to sign(x) past it
	{"$CMBIG", "33554432.0", "18014398509481984.0lf"},            // 2^25, 2^54: about 1/eps
	{"$CMSMALL", "1.220703125e-4", "3.7252902984619140625e-9lf"}, // 2^-13, 2^-28: below sqrt(eps)
	{"$CMEPS", "1.1920928955078125e-7", "2.220446049250313e-16lf"},
	{"$LBIG", "1099511627776.0", "3.273390607896142e150lf"},  // 2^40, 2^500: squares stay finite
	{"$SQBIG", "1.329228e36", "1.0715086071862673e301lf"},    // 2^120, 2^1000
	{"$SQSMALL", "7.888609e-31", "9.332636185032189e-302lf"}, // 2^-100, 2^-1000
	{"$SQK", "50", "500"},
}

// instantiateComplex returns the complex templates for float (double
// false) or double.
func instantiateComplex(double bool) string {
	k := 1
	r := []string{"$T", "float", "$V", "vec2", "$L", "", "$S", "F"}
	sb := "((floatBitsToUint(V) >> 31) != 0u)"
	if double {
		k = 2
		r = []string{"$T", "double", "$V", "dvec2", "$L", "lf", "$S", "D"}
		sb = "((unpackDouble2x32(V).y >> 31) != 0u)"
	}
	var cs []string
	for _, c := range complexConsts {
		cs = append(cs, c[0], c[k])
	}
	src := complexMathSrc + complexHypSrc + complexInvSrc
	return expandSignbit(strings.NewReplacer(append(cs, r...)...).Replace(src), sb)
}

// complexMathSrc: helpers, exp, expm1, log, log1p, log2, log10, sqrt and
// pow. $T the real type, $V the vector, $L the literal suffix, $S the
// suffix of the real functions and of the helpers.
const complexMathSrc = `$T cmNan$S() { return 0.0$L / 0.0$L; }
$T cmInf$S() { return 1.0$L / 0.0$L; }
bool cmFinite$S($T v) { return !isnan(v) && !isinf(v); }
$T cmCopysign$S($T v, $T s) { return SIGNBIT(s) ? -abs(v) : abs(v); }
$V cmNan2$S() { return $V(cmNan$S(), cmNan$S()); }
// s + e = a + b exactly (Knuth's two-sum).
void cmTwoSum$S($T a, $T b, out $T s, out $T e) {
	precise $T ss = a + b;
	precise $T bb = ss - a;
	precise $T ee = (a - (ss - bb)) + (b - bb);
	s = ss;
	e = ee;
}
// a + b*b + c*c: the products split exactly (Dekker), the five terms
// summed as in triple precision (Ogita, Rump and Oishi's SumK, K = 3), so
// that the result keeps its precision when the terms cancel to far below
// them (|z| next to 1).
$T cmSumSq$S($T a, $T b, $T c) {
	precise $T t[5];
	t[0] = a;
	t[1] = b * b;
	t[2] = c * c;
	t[3] = trigProdErr$S(b, b, t[1]);
	t[4] = trigProdErr$S(c, c, t[2]);
	for (int k = 0; k < 2; k++) {
		for (int i = 1; i < 5; i++) {
			$T s, e;
			cmTwoSum$S(t[i], t[i - 1], s, e);
			t[i] = s;
			t[i - 1] = e;
		}
	}
	precise $T v = (((t[0] + t[1]) + t[2]) + t[3]) + t[4];
	return v;
}
// The logarithm of x in base e (base 0), 2 (1) or 10 (2).
$T cmLogBase$S($T x, int base) { return base == 0 ? log$S(x) : (base == 1 ? log2$S(x) : log10$S(x)); }
// log|x + iy| in base e, 2 or 10, for x and y not NaN.
$T cmLogAbs$S($T x, $T y, int base) {
	$T a = max(abs(x), abs(y)), b = min(abs(x), abs(y));
	if (isinf(a)) return a;
	if (b == 0.0$L) return cmLogBase$S(a, base);
	$T k = base == 0 ? 1.0$L : (base == 1 ? $INVLN2 : $INVLN10);
	if (a >= 0.5$L && a <= 1.5$L) return 0.5$L * log1p$S(cmSumSq$S(-1.0$L, a, b)) * k;
	$T r = b / a;
	return cmLogBase$S(a, base) + 0.5$L * log1p$S(r * r) * k;
}
// e^x (cos y + i sin y) for finite nonzero y, x any but NaN.
$V cmExpCis$S($T x, $T y) {
	$T c = cos$S(y), s = sin$S(y);
	if (x > $EXPMAX) {
		$T h = exp$S(0.5$L * x);
		return $V((c * h) * h, (s * h) * h);
	}
	$T e = exp$S(x);
	return $V(e * c, e * s);
}
$V cexp($V z) {
	$T x = z.x, y = z.y;
	if (isnan(x)) return $V(x, y == 0.0$L ? y : x);
	if (y == 0.0$L) return $V(exp$S(x), y);
	if (!cmFinite$S(y)) {
		if (isinf(x)) return x < 0.0$L ? $V(0.0$L) : $V(x, cmNan$S());
		return cmNan2$S();
	}
	return cmExpCis$S(x, y);
}
$V cexpm1($V z) {
	$T x = z.x, y = z.y;
	if (isnan(x)) return $V(x, y == 0.0$L ? y : x);
	if (y == 0.0$L) return $V(x == 0.0$L ? 0.0$L : expm1x$S(x), y);
	if (!cmFinite$S(y)) {
		if (isinf(x)) return x < 0.0$L ? $V(-1.0$L, 0.0$L) : $V(x, cmNan$S());
		return cmNan2$S();
	}
	if (isinf(x) || x > $EXPM1BIG) {
		$V w = cmExpCis$S(x, y);
		return $V(w.x - 1.0$L, w.y);
	}
	$T h = sin$S(0.5$L * y);
	precise $T re = expm1x$S(x) * cos$S(y) - 2.0$L * h * h;
	return $V(re, exp$S(x) * sin$S(y));
}
// log z in base e, 2 or 10.
$V cmLog$S($V z, int base) {
	$T x = z.x, y = z.y;
	$T k = base == 0 ? 1.0$L : (base == 1 ? $INVLN2 : $INVLN10);
	if (isinf(x) || isinf(y)) return $V(cmInf$S(), atan2$S(y, x) * k);
	if (isnan(x) || isnan(y)) return cmNan2$S();
	if (x == 0.0$L && y == 0.0$L) return $V(-cmInf$S(), atan2$S(y, x) * k);
	return $V(cmLogAbs$S(x, y, base), atan2$S(y, x) * k);
}
$V clog($V z) { return cmLog$S(z, 0); }
$V clog2($V z) { return cmLog$S(z, 1); }
$V clog10($V z) { return cmLog$S(z, 2); }
$V clog1p($V z) {
	$T x = z.x, y = z.y;
	if (isinf(x) || isinf(y)) return $V(cmInf$S(), atan2$S(y, 1.0$L + x));
	if (isnan(x) || isnan(y)) return cmNan2$S();
	if (y == 0.0$L && x >= -1.0$L) return $V(log1p$S(x), y);
	$T u = 1.0$L + x; // exact when |1 + z| < 1/2
	if (abs(u) < 0.5$L && abs(y) < 0.5$L) return $V(cmLogAbs$S(u, y, 0), atan2$S(y, u));
	$T a = max(abs(x), abs(y));
	if (a > $LBIG) return $V(cmLogAbs$S(1.0$L + x, y, 0), atan2$S(y, 1.0$L + x));
	// |1 + z|^2 - 1 = 2x + x^2 + y^2
	return $V(0.5$L * log1p$S(cmSumSq$S(2.0$L * x, x, y)), atan2$S(y, 1.0$L + x));
}
$V csqrt($V z) {
	$T x = z.x, y = z.y;
	if (isinf(y)) return $V(cmInf$S(), y);
	if (isnan(x)) return cmNan2$S();
	if (isinf(x)) {
		if (isnan(y)) return x > 0.0$L ? $V(x, y) : $V(y, cmInf$S());
		return x > 0.0$L ? $V(x, cmCopysign$S(0.0$L, y)) : $V(0.0$L, cmCopysign$S(cmInf$S(), y));
	}
	if (isnan(y)) return cmNan2$S();
	if (x == 0.0$L && y == 0.0$L) return $V(0.0$L, y);
	$T ax = abs(x), ay = abs(y);
	$T m = max(ax, ay);
	int e = 0; // sqrt(z) = 2^e sqrt(z / 4^e)
	if (m > $SQBIG) e = 1;
	else if (m < $SQSMALL) e = -$SQK;
	ax = ldexp(ax, -2 * e);
	ay = ldexp(ay, -2 * e);
	$T t = sqrt(0.5$L * (ax + hypot$S(ax, ay)));
	$T u = 0.5$L * (ay / t);
	$V r = x >= 0.0$L ? $V(t, u) : $V(u, t);
	r = $V(ldexp(r.x, e), ldexp(r.y, e));
	return $V(r.x, cmCopysign$S(r.y, y));
}
$V cmMul$S($V a, $V b) { return $V(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
// 1/z for finite nonzero z (Smith's).
$V cmRecip$S($V z) {
	if (abs(z.x) >= abs(z.y)) {
		$T r = z.y / z.x;
		$T d = z.x + z.y * r;
		return $V(1.0$L / d, -r / d);
	}
	$T r = z.x / z.y;
	$T d = z.x * r + z.y;
	return $V(r / d, -1.0$L / d);
}
$V cpow($V z, $V w) {
	if (w.x == 0.0$L && w.y == 0.0$L) return $V(1.0$L, 0.0$L);
	bool zero = z.x == 0.0$L && z.y == 0.0$L;
	if (zero && w.x > 0.0$L) return $V(0.0$L);
	bool fin = cmFinite$S(z.x) && cmFinite$S(z.y);
	if (w.y == 0.0$L && fin && !zero && abs(w.x) <= 64.0$L && floor(w.x) == w.x) {
		int n = int(w.x);
		$V b = n < 0 ? cmRecip$S(z) : z;
		$V r = $V(1.0$L, 0.0$L);
		n = abs(n);
		for (int i = 0; i < 7 && n != 0; i++) {
			if ((n & 1) != 0) r = cmMul$S(r, b);
			n >>= 1;
			if (n != 0) b = cmMul$S(b, b);
		}
		if (cmFinite$S(r.x) && cmFinite$S(r.y)) return r; // else overflow: exp(w log z) below
	}
	$V l = clog(z);
	// w * log z, without 0 * Inf from a zero part of w.
	$V p;
	if (w.y == 0.0$L) p = w.x * l;
	else if (w.x == 0.0$L) p = $V(-w.y * l.y, w.y * l.x);
	else p = cmMul$S(w, l);
	return cexp(p);
}
`

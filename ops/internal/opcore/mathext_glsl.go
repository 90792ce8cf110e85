package opcore

import "strings"

// GLSL for the array API's exp/log family beyond mathglsl.go: expm1,
// log1p, log2, log10, sinh, cosh, asinh, acosh, atanh, hypot and
// logaddexp. Each is written once (mathExtSrc) over a type T and
// instantiated for float (suffix F, float16 and float32) and double
// (suffix D), on top of mathglsl.go's exp, expm1 and log of that
// precision. The formulas are fdlibm's: the special cases (signed zeros,
// ±Inf, NaN, the domain edges) come first and are exact; the rest avoid
// cancellation (log1p adds the rounding error of 1 + x back, asinh and
// acosh go through log1p near their zeros, sinh and cosh through expm1
// near 0, and the large ranges split exp to avoid overflow). Measured
// errors are in unary's and OPERATORS.md's tables.

// mathExtSrc is the template: $T the type, $L the literal suffix, $S the
// function suffix, SIGNBIT(v) the sign bit of v as a bool, and the constants
// in mathExtConsts.
const mathExtSrc = `$T expm1x$S($T x) {
	if (isnan(x) || x == 0.0$L) return x;
	if (x > $EXPMAX) return 1.0$L / 0.0$L;
	if (x < $EXPM1NEG) return -1.0$L;
	if (x > $EXPM1BIG) return exp$S(x) - 1.0$L;
	return expm1$S(x);
}
$T log1p$S($T x) {
	if (isnan(x)) return x;
	if (x == -1.0$L) return -1.0$L / 0.0$L;
	if (x < -1.0$L) return 0.0$L / 0.0$L;
	if (isinf(x) || x == 0.0$L) return x;
	precise $T u = 1.0$L + x;
	if (u == 1.0$L) return x;
	// c is the rounding error of u = 1 + x, exact (Sterbenz).
	precise $T c = u > 2.0$L ? 1.0$L - (u - x) : x - (u - 1.0$L);
	precise $T r = log$S(u) + c / u;
	return r;
}
// log2 and log10: the exponent exactly, plus the logarithm of the
// mantissa in [sqrt(1/2), sqrt(2)).
$T logMant$S($T x, out int e) {
	$T m = frexp(x, e);
	if (m < 0.70710678118654752$L) {
		m *= 2.0$L;
		e -= 1;
	}
	return log$S(m);
}
// logEdge sets r to a logarithm's special case of x (NaN, a negative,
// ±0 or +Inf) and reports whether x is one.
bool logEdge$S($T x, out $T r) {
	r = x;
	if (isnan(x)) return true;
	if (x < 0.0$L) { r = 0.0$L / 0.0$L; return true; }
	if (x == 0.0$L) { r = -1.0$L / 0.0$L; return true; }
	return isinf(x);
}
$T log2$S($T x) {
	$T r;
	if (logEdge$S(x, r)) return r;
	int e;
	$T l = logMant$S(x, e);
	precise $T y = $T(e) + l * $INVLN2;
	return y;
}
$T log10$S($T x) {
	$T r;
	if (logEdge$S(x, r)) return r;
	int e;
	$T l = logMant$S(x, e);
	precise $T y = $T(e) * $LOG10_2HI + ($T(e) * $LOG10_2LO + l * $INVLN10);
	return y;
}
$T sinh$S($T x) {
	if (isnan(x) || isinf(x) || x == 0.0$L) return x;
	$T ax = abs(x);
	$T h = SIGNBIT(x) ? -0.5$L : 0.5$L;
	if (ax < 1.0$L) {
		// Taylor: x + x^3/3! + ... + x^21/21! (below half an ULP at 1).
		$T z = x * x;
		$T p = 1.0$L / 51090942171709440000.0$L;
		p = 1.0$L / 121645100408832000.0$L + z * p;
		p = 1.0$L / 355687428096000.0$L + z * p;
		p = 1.0$L / 1307674368000.0$L + z * p;
		p = 1.0$L / 6227020800.0$L + z * p;
		p = 1.0$L / 39916800.0$L + z * p;
		p = 1.0$L / 362880.0$L + z * p;
		p = 1.0$L / 5040.0$L + z * p;
		p = 1.0$L / 120.0$L + z * p;
		p = 1.0$L / 6.0$L + z * p;
		precise $T r = x + x * (z * p);
		return r;
	}
	if (ax < $SINHMID) {
		$T t = expm1$S(ax);
		return h * (t + t / (t + 1.0$L));
	}
	if (ax < $EXPMAX) return h * exp$S(ax);
	$T w = exp$S(0.5$L * ax);
	return (h * w) * w;
}
$T cosh$S($T x) {
	if (isnan(x)) return x;
	$T ax = abs(x);
	if (isinf(ax)) return ax;
	if (ax < 0.34657359027997264$L) {
		$T t = expm1$S(ax);
		$T w = 1.0$L + t;
		return 1.0$L + (t * t) / (w + w);
	}
	if (ax < $SINHMID) {
		$T t = exp$S(ax);
		return 0.5$L * t + 0.5$L / t;
	}
	if (ax < $EXPMAX) return 0.5$L * exp$S(ax);
	$T w = exp$S(0.5$L * ax);
	return (0.5$L * w) * w;
}
$T asinh$S($T x) {
	if (isnan(x) || isinf(x) || x == 0.0$L) return x;
	$T ax = abs(x);
	$T w;
	if (ax > $ASINHBIG) w = log$S(ax) + $LN2;
	else if (ax > 2.0$L) w = log$S(2.0$L * ax + 1.0$L / (sqrt(ax * ax + 1.0$L) + ax));
	else {
		$T t = ax * ax;
		w = log1p$S(ax + t / (1.0$L + sqrt(1.0$L + t)));
	}
	return SIGNBIT(x) ? -w : w;
}
$T acosh$S($T x) {
	if (isnan(x)) return x;
	if (x < 1.0$L) return 0.0$L / 0.0$L;
	if (x == 1.0$L) return 0.0$L;
	if (isinf(x)) return x;
	if (x > $ASINHBIG) return log$S(x) + $LN2;
	if (x > 2.0$L) return log$S(2.0$L * x - 1.0$L / (x + sqrt(x * x - 1.0$L)));
	$T t = x - 1.0$L;
	return log1p$S(t + sqrt(2.0$L * t + t * t));
}
$T atanh$S($T x) {
	if (isnan(x) || x == 0.0$L) return x;
	$T ax = abs(x);
	if (ax > 1.0$L) return 0.0$L / 0.0$L;
	$T w;
	if (ax == 1.0$L) w = 1.0$L / 0.0$L;
	else if (ax < 0.5$L) {
		$T t = ax + ax;
		w = 0.5$L * log1p$S(t + t * ax / (1.0$L - ax));
	} else w = 0.5$L * log1p$S((ax + ax) / (1.0$L - ax));
	return SIGNBIT(x) ? -w : w;
}
$T hypot$S($T x, $T y) {
	if (isinf(x) || isinf(y)) return 1.0$L / 0.0$L;
	if (isnan(x) || isnan(y)) return x + y;
	$T a = max(abs(x), abs(y));
	$T b = min(abs(x), abs(y));
	if (b == 0.0$L) return a;
	$T r = b / a;
	return a * sqrt(1.0$L + r * r);
}
$T logaddexp$S($T x, $T y) {
	if (isnan(x) || isnan(y)) return x + y;
	if (x == y) return x + $LN2; // ±Inf too
	$T m = max(x, y);
	return m + log1p$S(exp$S(-abs(x - y)));
}
`

// mathExtConsts are the template's constants per precision: float,
// double.
var mathExtConsts = [][3]string{
	{"$EXPMAX", "88.72284", "709.782712893384lf"},
	{"$EXPM1NEG", "-18.0", "-38.0lf"}, // e**x below half an ULP of 1
	{"$EXPM1BIG", "20.0", "40.0lf"},   // e**x - 1 rounds as e**x; expm1's 2^k stays finite below
	{"$SINHMID", "9.0", "22.0lf"},     // e**-x negligible against e**x past it
	{"$ASINHBIG", "8192.0", "268435456.0lf"},
	{"$INVLN2", "1.4426950409", "1.4426950408889634lf"},
	{"$INVLN10", "4.3429449201e-01", "4.34294481903251816668e-01lf"},
	{"$LOG10_2HI", "3.0102920532e-01", "3.01029995663611771306e-01lf"},
	{"$LOG10_2LO", "7.9034151668e-07", "3.69423907715893078616e-13lf"},
	{"$LN2", "6.9314718056e-01", "6.93147180559945286227e-01lf"},
}

// instantiate returns mathExtSrc for float (double false) or double.
func instantiate(double bool) string {
	k := 1
	r := []string{"$T", "float", "$L", "", "$S", "F"}
	sb := "((floatBitsToUint(V) >> 31) != 0u)"
	if double {
		k = 2
		r = []string{"$T", "double", "$L", "lf", "$S", "D"}
		sb = "((unpackDouble2x32(V).y >> 31) != 0u)"
	}
	// The constants first: at one position the first old string in
	// argument order wins, and $L is a prefix of $LN2.
	var cs []string
	for _, c := range mathExtConsts {
		cs = append(cs, c[0], c[k])
	}
	src := strings.NewReplacer(append(cs, r...)...).Replace(mathExtSrc)
	return expandSignbit(src, sb)
}

// expandSignbit replaces each SIGNBIT(v) in src with sb, V in it standing
// for v.
func expandSignbit(src, sb string) string {
	for {
		i := strings.Index(src, "SIGNBIT(")
		if i < 0 {
			return src
		}
		j := strings.IndexByte(src[i:], ')') + i
		src = src[:i] + strings.ReplaceAll(sb, "V", src[i+8:j]) + src[j+1:]
	}
}

var (
	mathExtF32 = mathF32 + Guard("MATH_EXT_F32", instantiate(false))
	mathExtF64 = MathF64 + Guard("MATH_EXT_F64", instantiate(true))
)

// bitsGLSLF holds copysign and nextafter, exact bit manipulations: F for
// float32, H for float16 values held in float (through packHalf2x16,
// which needs no extension), D for double (64-bit words as uvec2, so that
// no int64 arithmetic is needed).
const bitsGLSLF = `#ifndef MATH_BITS_F
#define MATH_BITS_F
float copysignF(float x, float y) {
	return uintBitsToFloat((floatBitsToUint(x) & 0x7fffffffu) | (floatBitsToUint(y) & 0x80000000u));
}
// The step from bits ux (magnitude ax) toward uy (ay), sign bit s, for
// nonzero, non-NaN x with x != y.
uint stepBits(uint ux, uint ax, uint uy, uint ay, uint s) {
	bool up = (ux & s) == (uy & s) && ay > ax;
	return up ? ux + 1u : ux - 1u;
}
float nextafterF(float x, float y) {
	uint ux = floatBitsToUint(x), uy = floatBitsToUint(y);
	uint ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
	if (ax > 0x7f800000u || ay > 0x7f800000u) return x + y;
	if (ux == uy || (ax == 0u && ay == 0u)) return y;
	if (ax == 0u) return uintBitsToFloat((uy & 0x80000000u) | 1u);
	return uintBitsToFloat(stepBits(ux, ax, uy, ay, 0x80000000u));
}
float nextafterH(float x, float y) {
	uint ux = packHalf2x16(vec2(x, 0.0)) & 0xffffu, uy = packHalf2x16(vec2(y, 0.0)) & 0xffffu;
	uint ax = ux & 0x7fffu, ay = uy & 0x7fffu;
	if (ax > 0x7c00u || ay > 0x7c00u) return x + y;
	if (ux == uy || (ax == 0u && ay == 0u)) return y;
	uint r = ax == 0u ? ((uy & 0x8000u) | 1u) : stepBits(ux, ax, uy, ay, 0x8000u);
	return unpackHalf2x16(r).x;
}
#endif
`

// bitsGLSLD is bitsGLSLF's double half.
const bitsGLSLD = `#ifndef MATH_BITS_D
#define MATH_BITS_D
double copysignD(double x, double y) {
	uvec2 a = unpackDouble2x32(x);
	return packDouble2x32(uvec2(a.x, (a.y & 0x7fffffffu) | (unpackDouble2x32(y).y & 0x80000000u)));
}
double nextafterD(double x, double y) {
	if (isnan(x) || isnan(y)) return x + y;
	uvec2 ux = unpackDouble2x32(x), uy = unpackDouble2x32(y);
	uint hx = ux.y & 0x7fffffffu, hy = uy.y & 0x7fffffffu;
	bool zx = hx == 0u && ux.x == 0u, zy = hy == 0u && uy.x == 0u;
	if (ux == uy || (zx && zy)) return y;
	if (zx) return packDouble2x32(uvec2(1u, uy.y & 0x80000000u));
	bool up = (ux.y >> 31) == (uy.y >> 31) && (hy > hx || (hy == hx && uy.x > ux.x));
	uint c;
	if (up) {
		ux.x = uaddCarry(ux.x, 1u, c);
		ux.y += c;
	} else {
		ux.x = usubBorrow(ux.x, 1u, c);
		ux.y -= c;
	}
	return packDouble2x32(ux);
}
#endif
`

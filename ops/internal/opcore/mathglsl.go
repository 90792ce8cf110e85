package opcore

// GLSL math functions with known accuracy. The drivers' exp and tanh are
// only as accurate as Vulkan requires (lavapipe's float32 exp is off by up
// to 60 ULPs for large |x|, its tanh by thousands of ULPs near 0), and
// GLSL has no double-precision exp, log or tanh at all. These use the
// classic scheme: reduce x by multiples of ln 2 (Cody and Waite: ln 2 in
// two parts, the first with enough trailing zero bits that k*LN2_HI is
// exact), a polynomial on the reduced range, and a scale by 2^k built from
// its bits. `precise` keeps the reductions from being re-associated or
// contracted.
//
// Worst errors measured on lavapipe against Go's math package over
// 150,000 random inputs per function (|x| up to the overflow range, and
// near 0 and 1): float32 exp 1 ULP, log 1, sigmoid 2, tanh 3; float64 exp
// 2, log 1, sigmoid 2, tanh 3; float64 pow 1 (9,000 inputs, |y*log x| up
// to 700, against 300-bit big.Float). The tests hold them to 2 ULPs (tanh
// 4, pow 1). Subnormal results may be flushed to zero by a device
// that flushes denormals.

// Guard wraps GLSL helpers in an include guard, so that a kernel that
// needs them twice (a fused expression) defines them once.
func Guard(name, code string) string {
	return "#ifndef " + name + "\n#define " + name + "\n" + code + "#endif\n"
}

// mathF32 holds the float32 functions: expF, expm1F, logF, tanhF,
// sigmoidF.
var mathF32 = Guard("MATH_F32", mathF32Src)

// MathF32 is mathF32 for the op packages' kernels.
var MathF32 = mathF32

const mathF32Src = `const float LN2_HI = 6.9314575195e-01;
const float LN2_LO = 1.4286067653e-06;
const float INVLN2 = 1.4426950216e+00;
// 2^k for k in [-126, 127].
float pow2F(int k) { return intBitsToFloat((k + 127) << 23); }
// expm1 on |r| <= ln2/2: Taylor to degree 8.
float expm1R(float r) {
	return r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 +
		r * (1.0 / 5040.0 + r * (1.0 / 40320.0))))))));
}
float expF(float x) {
	if (isnan(x)) return x;
	if (x > 88.72284) return 1.0 / 0.0;
	if (x < -103.97208) return 0.0;
	float k = roundEven(x * INVLN2);
	precise float r = (x - k * LN2_HI) - k * LN2_LO;
	precise float p = 1.0 + expm1R(r);
	int ki = int(k);
	int k1 = ki / 2;
	return p * pow2F(k1) * pow2F(ki - k1);
}
// expm1 for finite |x| <= 88.
float expm1F(float x) {
	float k = roundEven(x * INVLN2);
	precise float r = (x - k * LN2_HI) - k * LN2_LO;
	float q = expm1R(r);
	if (k == 0.0) return q;
	float s = pow2F(int(k));
	precise float y = q * s + (s - 1.0);
	return y;
}
float logF(float x) {
	if (isnan(x)) return x;
	if (x < 0.0) return 0.0 / 0.0;
	if (x == 0.0) return -1.0 / 0.0;
	if (isinf(x)) return x;
	int e;
	float m = frexp(x, e);
	if (m < 0.70710678) {
		m *= 2.0;
		e -= 1;
	}
	precise float f = m - 1.0;
	precise float s = f / (2.0 + f);
	float z = s * s;
	float R = z * (2.0 / 3.0 + z * (2.0 / 5.0 + z * (2.0 / 7.0 + z * (2.0 / 9.0 + z * (2.0 / 11.0 + z * (2.0 / 13.0))))));
	precise float hfsq = 0.5 * f * f;
	float k = float(e);
	precise float y = k * LN2_HI - ((hfsq - (s * (hfsq + R) + k * LN2_LO)) - f);
	return y;
}
float tanhF(float x) {
	if (isnan(x) || x == 0.0) return x; // tanh(-0) is -0
	float ax = abs(x);
	float t = 1.0;
	if (ax < 9.1) {
		float e = expm1F(2.0 * ax);
		t = e / (e + 2.0);
	}
	return x < 0.0 ? -t : t;
}
float sigmoidF(float x) {
	if (isnan(x)) return x;
	if (x >= 0.0) return 1.0 / (1.0 + expF(-x));
	float e = expF(x);
	return e / (1.0 + e);
}
`

// MathF64 holds the float64 functions: expD, expm1D, logD, tanhD,
// sigmoidD.
var MathF64 = Guard("MATH_F64", mathF64Src)

const mathF64Src = `const double LN2_HI_D = 6.93147180369123816490e-01lf;
const double LN2_LO_D = 1.90821492927058770002e-10lf;
const double INVLN2_D = 1.44269504088896338700e+00lf;
// 2^k for k in [-1022, 1023].
double pow2D(int k) { return packDouble2x32(uvec2(0u, uint(k + 1023) << 20)); }
// expm1 on |r| <= ln2/2: Taylor to degree 13.
double expm1RD(double r) {
	double p = 1.0lf / 6227020800.0lf;
	p = 1.0lf / 479001600.0lf + r * p;
	p = 1.0lf / 39916800.0lf + r * p;
	p = 1.0lf / 3628800.0lf + r * p;
	p = 1.0lf / 362880.0lf + r * p;
	p = 1.0lf / 40320.0lf + r * p;
	p = 1.0lf / 5040.0lf + r * p;
	p = 1.0lf / 720.0lf + r * p;
	p = 1.0lf / 120.0lf + r * p;
	p = 1.0lf / 24.0lf + r * p;
	p = 1.0lf / 6.0lf + r * p;
	p = 0.5lf + r * p;
	p = 1.0lf + r * p;
	return r * p;
}
double expD(double x) {
	if (isnan(x)) return x;
	if (x > 709.782712893384lf) return 1.0lf / 0.0lf;
	if (x < -745.1332191019412lf) return 0.0lf;
	double k = roundEven(x * INVLN2_D);
	precise double r = (x - k * LN2_HI_D) - k * LN2_LO_D;
	precise double p = 1.0lf + expm1RD(r);
	int ki = int(k);
	int k1 = ki / 2;
	return p * pow2D(k1) * pow2D(ki - k1);
}
// expm1 for finite |x| <= 709.
double expm1D(double x) {
	double k = roundEven(x * INVLN2_D);
	precise double r = (x - k * LN2_HI_D) - k * LN2_LO_D;
	double q = expm1RD(r);
	if (k == 0.0lf) return q;
	double s = pow2D(int(k));
	precise double y = q * s + (s - 1.0lf);
	return y;
}
double logD(double x) {
	if (isnan(x)) return x;
	if (x < 0.0lf) return 0.0lf / 0.0lf;
	if (x == 0.0lf) return -1.0lf / 0.0lf;
	if (isinf(x)) return x;
	int e;
	double m = frexp(x, e);
	if (m < 0.70710678118654752lf) {
		m *= 2.0lf;
		e -= 1;
	}
	precise double f = m - 1.0lf;
	precise double s = f / (2.0lf + f);
	double z = s * s;
	double R = 2.0lf / 25.0lf;
	R = 2.0lf / 23.0lf + z * R;
	R = 2.0lf / 21.0lf + z * R;
	R = 2.0lf / 19.0lf + z * R;
	R = 2.0lf / 17.0lf + z * R;
	R = 2.0lf / 15.0lf + z * R;
	R = 2.0lf / 13.0lf + z * R;
	R = 2.0lf / 11.0lf + z * R;
	R = 2.0lf / 9.0lf + z * R;
	R = 2.0lf / 7.0lf + z * R;
	R = 2.0lf / 5.0lf + z * R;
	R = 2.0lf / 3.0lf + z * R;
	R = z * R;
	precise double hfsq = 0.5lf * f * f;
	double k = double(e);
	precise double y = k * LN2_HI_D - ((hfsq - (s * (hfsq + R) + k * LN2_LO_D)) - f);
	return y;
}
double tanhD(double x) {
	if (isnan(x) || x == 0.0lf) return x; // tanh(-0) is -0
	double ax = abs(x);
	double t = 1.0lf;
	if (ax < 19.1lf) {
		double e = expm1D(2.0lf * ax);
		t = e / (e + 2.0lf);
	}
	return x < 0.0lf ? -t : t;
}
double sigmoidD(double x) {
	if (isnan(x)) return x;
	if (x >= 0.0lf) return 1.0lf / (1.0lf + expD(-x));
	double e = expD(x);
	return e / (1.0lf + e);
}
`

// powF32 is C's pow for float32, computed as exp(y*log|x|) in double
// (mathF64) when the device has float64, so the result is within an ULP;
// powF32Lite uses the driver's exp2 and log2 instead, whose error grows
// with |y*log2|x||.
const powF32Body = `	if (y == 0.0 || x == 1.0) return 1.0;
	if (isnan(x) || isnan(y)) return x + y;
	float ax = abs(x);
	if (isinf(y)) {
		if (ax == 1.0) return 1.0;
		return ((ax > 1.0) == (y > 0.0)) ? 1.0 / 0.0 : 0.0;
	}
	bool neg = (floatBitsToUint(x) >> 31) != 0u;
	bool yint = floor(y) == y;
	float r;
	if (ax == 0.0) r = y < 0.0 ? 1.0 / 0.0 : 0.0;
	else if (isinf(ax)) r = y < 0.0 ? 0.0 : 1.0 / 0.0;
	else if (neg && !yint) return 0.0 / 0.0;
	else r = POW_CORE;
	bool odd = yint && abs(y) < 16777216.0 && mod(y, 2.0) == 1.0;
	return (neg && odd) ? -r : r;
}
`

// PowF64 is C's pow in double: log|x| as a double-double (the quotient
// f/(2+f) and its remainder through fma, the series' small terms in
// double), y times it as a double-double, and exp of that with the low
// part folded into the reduced argument.
var PowF64 = MathF64 + Guard("POW_D", `// The rounding error of a*b (Dekker's product: some drivers do not fuse
// fma on doubles).
double prodErr(double a, double b, double p) {
	precise double ca = 134217729.0lf * a;
	precise double ah = ca - (ca - a);
	precise double al = a - ah;
	precise double cb = 134217729.0lf * b;
	precise double bh = cb - (cb - b);
	precise double bl = b - bh;
	precise double e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
	return e;
}
// log(x) for finite x > 0 as hi + lo.
void logDD(double x, out double hi, out double lo) {
	int e;
	double m = frexp(x, e);
	if (m < 0.70710678118654752lf) {
		m *= 2.0lf;
		e -= 1;
	}
	precise double f = m - 1.0lf;
	precise double d = 2.0lf + f;
	precise double dlo = (2.0lf - d) + f;
	precise double s = f / d;
	precise double sd = s * d;
	precise double rr = (f - sd) - prodErr(s, d, sd);
	precise double slo = (rr - s * dlo) / d;
	double z = s * s;
	double R = 2.0lf / 25.0lf;
	R = 2.0lf / 23.0lf + z * R;
	R = 2.0lf / 21.0lf + z * R;
	R = 2.0lf / 19.0lf + z * R;
	R = 2.0lf / 17.0lf + z * R;
	R = 2.0lf / 15.0lf + z * R;
	R = 2.0lf / 13.0lf + z * R;
	R = 2.0lf / 11.0lf + z * R;
	R = 2.0lf / 9.0lf + z * R;
	R = 2.0lf / 7.0lf + z * R;
	R = 2.0lf / 5.0lf + z * R;
	R = 2.0lf / 3.0lf + z * R;
	R = z * R;
	double k = double(e);
	precise double a = k * LN2_HI_D;
	precise double b = 2.0lf * s;
	precise double sh = a + b;
	precise double bb = sh - a;
	precise double sl = (a - (sh - bb)) + (b - bb);
	sl += 2.0lf * slo + s * R + k * LN2_LO_D;
	precise double h = sh + sl;
	precise double l = sl - (h - sh); // only precise locals keep this from folding to 0
	hi = h;
	lo = l;
}
// exp(x + xlo), |xlo| tiny against x.
double expDD(double x, double xlo) {
	if (x > 709.782712893384lf) return 1.0lf / 0.0lf;
	if (x < -745.1332191019412lf) return 0.0lf;
	double k = roundEven(x * INVLN2_D);
	precise double r = ((x - k * LN2_HI_D) - k * LN2_LO_D) + xlo;
	precise double p = 1.0lf + expm1RD(r);
	int ki = int(k);
	int k1 = ki / 2;
	return p * pow2D(k1) * pow2D(ki - k1);
}
double powD(double x, double y) {
	if (y == 0.0lf || x == 1.0lf) return 1.0lf;
	if (isnan(x) || isnan(y)) return x + y;
	double ax = abs(x);
	if (isinf(y)) {
		if (ax == 1.0lf) return 1.0lf;
		return ((ax > 1.0lf) == (y > 0.0lf)) ? 1.0lf / 0.0lf : 0.0lf;
	}
	bool neg = (unpackDouble2x32(x).y >> 31) != 0u;
	bool yint = floor(y) == y;
	double r;
	if (ax == 0.0lf) r = y < 0.0lf ? 1.0lf / 0.0lf : 0.0lf;
	else if (isinf(ax)) r = y < 0.0lf ? 0.0lf : 1.0lf / 0.0lf;
	else if (neg && !yint) return 0.0lf / 0.0lf;
	else {
		double lh, ll;
		logDD(ax, lh, ll);
		precise double ph = y * lh;
		precise double pl = prodErr(y, lh, ph) + y * ll;
		r = expDD(ph, pl);
	}
	bool odd = yint && abs(y) < 9007199254740992.0lf && mod(y, 2.0lf) == 1.0lf;
	return (neg && odd) ? -r : r;
}
`)

var (
	PowF32     = MathF64 + Guard("POW_C", "float powC(float x, float y) {\n#define POW_CORE float(expD(double(y) * logD(double(ax))))\n"+powF32Body)
	PowF32Lite = Guard("POW_C", "float powC(float x, float y) {\n#define POW_CORE exp2(y * log2(ax))\n"+powF32Body)
)

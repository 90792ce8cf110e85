package opcore

import "strings"

// GLSL for sin, cos, tan, asin, acos, atan and atan2, written once over a
// type T (trigSrc) and instantiated for float (suffix F: float16 and
// float32) and double (suffix D); the drivers' sin and cos are float only
// and only as accurate as Vulkan requires.
//
// sin, cos and tan reduce |x| to r = |x| - q*pi/2, |r| <= pi/4, carried
// as r_hi + r_lo. Below 2^19*pi/2 (float: 2^11*pi/2) the reduction is Cody
// and Waite's, with pi/2 in three parts; past it Payne and Hanek's: x's
// mantissa (an integer M < 2^53) times the window of 2/pi's bits that
// matters (the bits before it give multiples of 4, those after it less
// than 2^-139 of a turn), in 32-bit words (umulExtended, uaddCarry: no
// 64-bit integers needed), so that every finite argument, up to the
// largest float, is reduced exactly enough. The kernels are Taylor series
// on |r| <= pi/4 that take r_lo into account (fdlibm's scheme); tan is
// sin/cos of the reduced argument.
//
// atan reduces |x| > 1 to pi/2 - atan(1/|x|) and t in [0, 1] to atan(c)
// + atan((t - c)/(1 + t c)), c = k/8 the nearest eighth (atan(c) as hi +
// lo), with a series on |u| <= 1/16; atan2 divides the smaller magnitude
// by the larger, so it never loses the quotient to overflow. asin and acos
// use the series below 1/2 and asin(x) = pi/2 - 2 asin(sqrt((1-x)/2))
// above, the square root carried with its exact remainder. The special
// cases of the array API come first and are exact.

// trigSrc is the template: $T the type, $L the literal suffix, $S the
// function suffix, SIGNBIT(v) the sign bit of v, and trigConsts' names.
const trigSrc = `// The rounding error of a*b (Dekker's product, no fma needed).
$T trigProdErr$S($T a, $T b, $T p) {
	precise $T ca = $SPLIT * a;
	precise $T ah = ca - (ca - a);
	precise $T al = a - ah;
	precise $T cb = $SPLIT * b;
	precise $T bh = cb - (cb - b);
	precise $T bl = b - bh;
	precise $T e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
	return e;
}
// Adds v at word j of a (a[0] the most significant), carrying up; a carry
// out of a[0] is an integer and dropped.
void trigAddAt$S(inout uint a[$K], int j, uint v) {
	uint c = v;
	for (int i = j; i >= 0 && c != 0u; i--) {
		a[i] = uaddCarry(a[i], c, c);
	}
}
// Payne and Hanek: |x| = q*pi/2 + rh + rl for finite ax > pi/4; returns
// q mod 4.
int trigReducePH$S($T ax, out $T rh, out $T rl) {
	int e;
	$T m = frexp(ax, e);
	$T mi = ldexp(m, $MBITS); // an integer below 2^MBITS
	e -= $MBITS;
	uint mhi = uint(floor(mi * (1.0$L / 4294967296.0$L)));
	uint mlo = uint(mi - $T(mhi) * 4294967296.0$L);
	// frac(M * F), F = 0.G0 G1 ... the words of 2/pi from bit e - 1:
	// ax*2/pi = 4*M*F modulo 4.
	uint a[$K];
	for (int j = 0; j < $K; j++) a[j] = 0u;
	for (int k = 0; k < $K; k++) {
		uint g = trigWord(e - 1 + 32 * k);
		uint h, l;
		umulExtended(mlo, g, h, l);
		trigAddAt$S(a, k, l);
		if (k >= 1) trigAddAt$S(a, k - 1, h);
		umulExtended(mhi, g, h, l);
		if (k >= 1) trigAddAt$S(a, k - 1, l);
		if (k >= 2) trigAddAt$S(a, k - 2, h);
	}
	// 4*frac: the quadrant is the top two bits.
	int q = int(a[0] >> 30);
	for (int j = 0; j < $K - 1; j++) a[j] = (a[j] << 2) | (a[j + 1] >> 30);
	a[$K - 1] <<= 2;
	bool neg = (a[0] >> 31) != 0u;
	if (neg) { // the fraction is 1 - a: two's complement
		q += 1;
		uint c = 1u;
		for (int j = $K - 1; j >= 0; j--) a[j] = uaddCarry(~a[j], c, c);
	}
	int i0 = 0;
	while (i0 < $K && a[i0] == 0u) i0++;
	if (i0 == $K) {
		rh = 0.0$L;
		rl = 0.0$L;
		return q & 3;
	}
	int lz = 31 - findMSB(a[i0]);
	uint w[3];
	for (int j = 0; j < 3; j++) {
		uint hiw = i0 + j < $K ? a[i0 + j] : 0u;
		uint low = i0 + j + 1 < $K ? a[i0 + j + 1] : 0u;
		w[j] = lz == 0 ? hiw : (hiw << lz) | (low >> (32 - lz));
	}
	// The 96 bits as h + l, in 16-bit pieces (exact in float too).
	precise $T h = $T(w[0] >> 16) * (1.0$L / 65536.0$L);
	precise $T l = 0.0$L;
	$T sc = 1.0$L / 65536.0$L;
	for (int j = 1; j < 6; j++) {
		sc *= 1.0$L / 65536.0$L;
		uint piece = (j & 1) == 1 ? (w[j >> 1] & 0xffffu) : (w[j >> 1] >> 16);
		precise $T v = $T(piece) * sc;
		precise $T s = h + v;
		l += (h - s) + v;
		h = s;
	}
	int ex = -32 * i0 - lz;
	h = ldexp(h, ex);
	l = ldexp(l, ex);
	// times pi/2, as hi + lo.
	precise $T ph = h * $PIO2_HI;
	precise $T pl = trigProdErr$S(h, $PIO2_HI, ph) + (h * $PIO2_LO + l * $PIO2_HI);
	precise $T s = ph + pl;
	precise $T t = pl - (s - ph);
	rh = neg ? -s : s;
	rl = neg ? -t : t;
	return q & 3;
}
// Cody and Waite: pi/2 as C1 + C2 + C3 (C1 and C2 with trailing zero
// bits, so that q*C1 and q*C2 are exact for q < 2^20, float 2^12), for ax <=
// CWMAX.
int trigReduceCW$S($T ax, out $T rh, out $T rl) {
	$T qf = roundEven(ax * (1.0$L / $PIO2_HI));
	precise $T r1 = ax - qf * $CW1;     // exact
	precise $T w = qf * $CW2;          // exact
	precise $T r2 = r1 - w;
	precise $T b2 = r2 - r1;
	precise $T e2 = (r1 - (r2 - b2)) - (w + b2); // r1 - w = r2 + e2
	precise $T p3 = qf * $CW3;
	precise $T p3e = trigProdErr$S(qf, $CW3, p3) + qf * $CW4;
	precise $T s = r2 - p3;
	precise $T bb = s - r2;
	precise $T e3 = (r2 - (s - bb)) - (p3 + bb);
	precise $T lo = (e2 + e3) - p3e;
	precise $T hi = s + lo;
	rh = hi;
	rl = lo - (hi - s);
	return int(qf) & 3;
}
int trigReduce$S($T ax, out $T rh, out $T rl) {
	if (ax <= $PIO4_HI) {
		rh = ax;
		rl = 0.0$L;
		return 0;
	}
	if (ax <= $CWMAX) return trigReduceCW$S(ax, rh, rl);
	return trigReducePH$S(ax, rh, rl);
}
// sin(x + y) and cos(x + y), |x + y| <= pi/4 (and a little), y tiny.
$T sinK$S($T x, $T y) {
	$T z = x * x;
	precise $T r = x + (y * (1.0$L - 0.5$L * z) + x * z * $SINPOLY);
	return r;
}
$T cosK$S($T x, $T y) {
	$T z = x * x;
	$T c = z * z * $COSPOLY;
	precise $T hz = 0.5$L * z;
	precise $T w = 1.0$L - hz;
	precise $T r = w + (((1.0$L - w) - hz) + (c - x * y));
	return r;
}
$T sin$S($T x) {
	if (isnan(x)) return x;
	if (isinf(x)) return 0.0$L / 0.0$L;
	if (x == 0.0$L) return x; // sin(-0) is -0
	$T rh, rl;
	int q = trigReduce$S(abs(x), rh, rl);
	$T s = (q & 1) == 0 ? sinK$S(rh, rl) : cosK$S(rh, rl);
	if (q >= 2) s = -s;
	return SIGNBIT(x) ? -s : s;
}
$T cos$S($T x) {
	if (isnan(x)) return x;
	if (isinf(x)) return 0.0$L / 0.0$L;
	$T rh, rl;
	int q = trigReduce$S(abs(x), rh, rl);
	$T c = (q & 1) == 0 ? cosK$S(rh, rl) : sinK$S(rh, rl);
	return (q == 1 || q == 2) ? -c : c;
}
$T tan$S($T x) {
	if (isnan(x)) return x;
	if (isinf(x)) return 0.0$L / 0.0$L;
	if (x == 0.0$L) return x; // tan(-0) is -0
	$T rh, rl;
	int q = trigReduce$S(abs(x), rh, rl);
	$T s = sinK$S(rh, rl), c = cosK$S(rh, rl);
	$T t = (q & 1) == 0 ? s / c : -c / s;
	return SIGNBIT(x) ? -t : t;
}
// atan(t) = hi + lo for 0 <= t <= 1.
void atanPos$S($T t, out $T hi, out $T lo) {
	int k = int(roundEven(t * 8.0$L));
	$T c = $T(k) * 0.125$L;
	precise $T u = (t - c) / (1.0$L + t * c); // t - c exact (Sterbenz)
	$T z = u * u;
	$T his[9] = $T[9]($ATANHI);
	$T los[9] = $T[9]($ATANLO);
	hi = his[k];
	precise $T r = u + (los[k] + u * z * $ATANPOLY);
	lo = r;
}
// ch + cl - (hi + lo), ch + cl + (hi + lo): a constant's two parts and
// atanPos's.
$T trigSubFrom$S($T ch, $T cl, $T hi, $T lo) {
	precise $T s = ch - hi;
	precise $T bb = s - ch;
	precise $T e = (ch - (s - bb)) - (hi + bb);
	precise $T r = s + ((e + cl) - lo);
	return r;
}
$T trigAddTo$S($T ch, $T cl, $T hi, $T lo) {
	precise $T s = ch + hi;
	precise $T bb = s - ch;
	precise $T e = (ch - (s - bb)) + (hi - bb);
	precise $T r = s + ((e + cl) + lo);
	return r;
}
$T atan$S($T x) {
	if (isnan(x) || x == 0.0$L) return x; // atan(-0) is -0
	$T ax = abs(x), hi, lo, r;
	if (isinf(ax)) r = $PIO2_HI;
	else if (ax <= 1.0$L) {
		atanPos$S(ax, hi, lo);
		precise $T s = hi + lo;
		r = s;
	} else {
		atanPos$S(1.0$L / ax, hi, lo);
		r = trigSubFrom$S($PIO2_HI, $PIO2_LO, hi, lo);
	}
	return SIGNBIT(x) ? -r : r;
}
$T atan2$S($T y, $T x) {
	if (isnan(x) || isnan(y)) return x + y;
	bool sx = SIGNBIT(x);
	$T ay = abs(y), ax = abs(x), hi, lo, r;
	if (isinf(ay) && isinf(ax)) r = sx ? $P3O4_HI : $PIO4_HI;
	else if (ay == 0.0$L || isinf(ax)) r = sx ? $PI_HI : 0.0$L;
	else if (ax == 0.0$L || isinf(ay)) r = $PIO2_HI;
	else if (ay <= ax) {
		atanPos$S(ay / ax, hi, lo);
		if (sx) r = trigSubFrom$S($PI_HI, $PI_LO, hi, lo);
		else {
			precise $T s = hi + lo;
			r = s;
		}
	} else {
		atanPos$S(ax / ay, hi, lo);
		r = sx ? trigAddTo$S($PIO2_HI, $PIO2_LO, hi, lo) : trigSubFrom$S($PIO2_HI, $PIO2_LO, hi, lo);
	}
	return SIGNBIT(y) ? -r : r;
}
// asin(s) - s for 0 <= s <= 1/2 (the series' tail), z = s*s.
$T asinTail$S($T s, $T z) { return s * z * $ASINPOLY; }
// For 1/2 <= ax <= 1: s = sqrt((1 - ax)/2) as sh + sl.
void asinHalf$S($T ax, out $T sh, out $T sl) {
	$T z = (1.0$L - ax) * 0.5$L; // exact
	sh = sqrt(z);
	sl = 0.0$L;
	if (z > 0.0$L) {
		precise $T p = sh * sh;
		precise $T d = ((z - p) - trigProdErr$S(sh, sh, p)) / (2.0$L * sh);
		sl = d;
	}
}
$T asin$S($T x) {
	if (isnan(x) || x == 0.0$L) return x; // asin(-0) is -0
	$T ax = abs(x), r;
	if (ax > 1.0$L) return 0.0$L / 0.0$L;
	if (ax < 0.5$L) {
		precise $T v = ax + asinTail$S(ax, ax * ax);
		r = v;
	} else {
		$T sh, sl;
		asinHalf$S(ax, sh, sl);
		// pi/2 - 2 asin(s)
		r = trigSubFrom$S($PIO2_HI, $PIO2_LO, 2.0$L * sh, 2.0$L * (sl + asinTail$S(sh, sh * sh)));
	}
	return SIGNBIT(x) ? -r : r;
}
$T acos$S($T x) {
	if (isnan(x)) return x;
	$T ax = abs(x);
	if (ax > 1.0$L) return 0.0$L / 0.0$L;
	if (ax < 0.5$L) { // pi/2 - asin(x)
		$T t = asinTail$S(ax, ax * ax);
		return SIGNBIT(x) ? trigAddTo$S($PIO2_HI, $PIO2_LO, ax, t) : trigSubFrom$S($PIO2_HI, $PIO2_LO, ax, t);
	}
	$T sh, sl;
	asinHalf$S(ax, sh, sl);
	$T lo = sl + asinTail$S(sh, sh * sh);
	if (SIGNBIT(x)) return trigSubFrom$S($PI_HI, $PI_LO, 2.0$L * sh, 2.0$L * lo); // pi - 2 asin(s)
	precise $T r = 2.0$L * sh + 2.0$L * lo; // 2 asin(s)
	return r;
}
`

// trigWordSrc reads 2/pi's bits.
const trigWordSrc = `// Bits s .. s+31 of 2/pi's fraction (bit 1 the first; bits <= 0 are 0).
uint trigWord(int s) {
	if (s >= 1) {
		int w = (s - 1) >> 5, b = (s - 1) & 31;
		uint v = TWO_OVER_PI[w] << b;
		if (b > 0) v |= TWO_OVER_PI[w + 1] >> (32 - b);
		return v;
	}
	if (s > -31) return TWO_OVER_PI[0] >> (1 - s);
	return 0u;
}
`

// instantiateTrig returns trigSrc for float (double false) or double.
func instantiateTrig(double bool) string {
	r := []string{"$T", "float", "$L", "", "$S", "F"}
	sb := "((floatBitsToUint(V) >> 31) != 0u)"
	if double {
		r = []string{"$T", "double", "$L", "lf", "$S", "D"}
		sb = "((unpackDouble2x32(V).y >> 31) != 0u)"
	}
	var rep []string
	for _, c := range trigConsts(double) {
		rep = append(rep, c[0], c[1])
	}
	src := strings.NewReplacer(append(rep, r...)...).Replace(trigSrc)
	return expandSignbit(src, sb)
}

var (
	trigTable = Guard("TRIG_TABLE", twoOverPiGLSL()+trigWordSrc)
	trigF32   = trigTable + Guard("TRIG_F32", instantiateTrig(false))
	trigF64   = trigTable + Guard("TRIG_F64", instantiateTrig(true))
)

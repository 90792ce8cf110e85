package opcore

// complexHypSrc: sinh, cosh, tanh, and sin, cos and tan through them
// (complexmath_glsl.go has the scheme).
const complexHypSrc = `// e^ax (c + i s) / 2 for ax past the overflow threshold of e^ax.
$V cmHalfExpCis$S($T ax, $T c, $T s) {
	$T h = exp$S(0.5$L * ax);
	return $V(((0.5$L * c) * h) * h, ((0.5$L * s) * h) * h);
}
$V csinh($V z) {
	$T x = z.x, y = z.y;
	if (y == 0.0$L) return $V(sinh$S(x), y);
	if (cmFinite$S(y)) {
		if (isnan(x)) return cmNan2$S();
		$T c = cos$S(y), s = sin$S(y);
		if (isinf(x)) return $V(x * c, abs(x) * s);
		if (abs(x) > $EXPMAX) {
			$V w = cmHalfExpCis$S(abs(x), c, s);
			return $V(SIGNBIT(x) ? -w.x : w.x, w.y);
		}
		return $V(sinh$S(x) * c, cosh$S(x) * s);
	}
	// y is Inf or NaN
	if (x == 0.0$L || isinf(x)) return $V(x, cmNan$S());
	return cmNan2$S();
}
$V ccosh($V z) {
	$T x = z.x, y = z.y;
	if (y == 0.0$L) return $V(cosh$S(x), cmCopysign$S(0.0$L, x) * y);
	if (cmFinite$S(y)) {
		if (isnan(x)) return cmNan2$S();
		$T c = cos$S(y), s = sin$S(y);
		if (isinf(x)) return $V(abs(x) * c, x * s);
		if (abs(x) > $EXPMAX) {
			$V w = cmHalfExpCis$S(abs(x), c, s);
			return $V(w.x, SIGNBIT(x) ? -w.y : w.y);
		}
		return $V(cosh$S(x) * c, sinh$S(x) * s);
	}
	// y is Inf or NaN
	if (x == 0.0$L) return $V(cmNan$S(), x);
	if (isinf(x)) return $V(abs(x), cmNan$S());
	return cmNan2$S();
}
$V ctanh($V z) {
	$T x = z.x, y = z.y;
	if (isinf(x)) return $V(SIGNBIT(x) ? -1.0$L : 1.0$L, isnan(y) ? 0.0$L : cmCopysign$S(0.0$L, y));
	if (isnan(x)) return $V(x, y == 0.0$L ? y : x);
	if (!cmFinite$S(y)) return $V(x == 0.0$L ? x : cmNan$S(), cmNan$S());
	if (abs(x) > $TANHBIG) {
		$T e = exp$S(-2.0$L * abs(x));
		return $V(SIGNBIT(x) ? -1.0$L : 1.0$L, (4.0$L * sin$S(y) * cos$S(y)) * e);
	}
	// Kahan: t = tan y, b = 1 + t^2, s = sinh x, rho = sqrt(1 + s^2).
	$T t = tan$S(y);
	$T b = 1.0$L + t * t;
	$T s = sinh$S(x);
	$T rho = sqrt(1.0$L + s * s);
	$T d = 1.0$L + b * s * s;
	return $V((b * rho * s) / d, t / d);
}
// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz).
$V csin($V z) {
	$V w = csinh($V(-z.y, z.x));
	return $V(w.y, -w.x);
}
$V ccos($V z) { return ccosh($V(-z.y, z.x)); }
$V ctan($V z) {
	$V w = ctanh($V(-z.y, z.x));
	return $V(w.y, -w.x);
}
`

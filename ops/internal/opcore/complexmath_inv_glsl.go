package opcore

// complexInvSrc: asin, acos, asinh, acosh, atanh and atan
// (complexmath_glsl.go has the scheme).
const complexInvSrc = `// Hull, Fairgrieve and Tang: for finite x, y >= 0, asin(x + iy) = re +
// i im (re, im >= 0), and ac = Re acos(x + iy).
void cmAsinQ$S($T x, $T y, out $T re, out $T im, out $T ac) {
	if (x > $CMBIG || y > $CMBIG) { // asin z = -i log(2iz) + O(1/z^2)
		re = atan2$S(x, y);
		ac = atan2$S(y, x);
		im = cmLogAbs$S(x, y, 0) + $LN2;
		return;
	}
	if (x < $CMSMALL && y < $CMSMALL) { // asin z = z + O(z^3)
		re = x;
		im = y;
		precise $T a = ($PIO2 - x) + $PIO2_LO;
		ac = a;
		return;
	}
	if (x < 1.0$L && y < $CMEPS * (1.0$L - x)) { // A = 1 to working precision
		re = asin$S(x);
		ac = acos$S(x);
		im = y / sqrt((1.0$L - x) * (1.0$L + x));
		return;
	}
	// R = |z + 1|, S = |z - 1|, A = (R + S)/2, B = x/A.
	$T R = hypot$S(x + 1.0$L, y);
	$T S = hypot$S(x - 1.0$L, y);
	$T A = 0.5$L * (R + S);
	$T B = x / A;
	$T y2 = y * y;
	$T rp = R + (x + 1.0$L);
	$T apx = A + x;
	if (B <= 0.6417$L) {
		re = asin$S(B);
		ac = acos$S(B);
	} else {
		$T d; // sqrt((A - x)(A + x)) = sqrt(A^2 - x^2), without cancellation
		if (x <= 1.0$L) d = sqrt(0.5$L * apx * (y2 / rp + (S + (1.0$L - x))));
		else d = y * sqrt(0.5$L * (apx / rp + apx / (S + (x - 1.0$L))));
		re = atan$S(x / d);
		ac = atan$S(d / x);
	}
	if (A <= 1.5$L) {
		$T am1 = x < 1.0$L ? 0.5$L * (y2 / rp + y2 / (S + (1.0$L - x))) : 0.5$L * (y2 / rp + (S + (x - 1.0$L)));
		im = log1p$S(am1 + sqrt(am1 * (A + 1.0$L)));
	} else {
		im = log$S(A + sqrt(A * A - 1.0$L));
	}
}
// pi - a for 0 <= a <= pi/2.
$T cmPiMinus$S($T a) {
	precise $T r = ($PI - a) + $PI_LO;
	return r;
}
$V casinh($V z) {
	$T x = z.x, y = z.y;
	if (isnan(x)) {
		if (y == 0.0$L) return $V(x, y);
		return isinf(y) ? $V(abs(y), x) : cmNan2$S();
	}
	if (isnan(y)) return isinf(x) ? $V(x, y) : cmNan2$S();
	if (isinf(x) || isinf(y)) {
		$T im = isinf(y) ? (isinf(x) ? $PIO4 : $PIO2) : 0.0$L;
		return $V(cmCopysign$S(cmInf$S(), x), cmCopysign$S(im, y));
	}
	// asinh(x + iy) = b + ia for asin(|y| + i|x|) = a + ib, signs from z.
	$T re, im, ac;
	cmAsinQ$S(abs(y), abs(x), re, im, ac);
	return $V(cmCopysign$S(im, x), cmCopysign$S(re, y));
}
$V casin($V z) {
	$V w = casinh($V(-z.y, z.x));
	return $V(w.y, -w.x);
}
$V cacos($V z) {
	$T x = z.x, y = z.y;
	if (isnan(x)) return isinf(y) ? $V(x, -y) : cmNan2$S();
	if (isnan(y)) {
		if (isinf(x)) return $V(y, cmInf$S());
		return x == 0.0$L ? $V($PIO2, y) : cmNan2$S();
	}
	if (isinf(x) || isinf(y)) {
		$T re = isinf(y) ? (isinf(x) ? (x < 0.0$L ? $P3O4 : $PIO4) : $PIO2) : (x < 0.0$L ? $PI : 0.0$L);
		return $V(re, SIGNBIT(y) ? cmInf$S() : -cmInf$S());
	}
	$T re, im, ac;
	cmAsinQ$S(abs(x), abs(y), re, im, ac);
	if (SIGNBIT(x)) ac = cmPiMinus$S(ac); // acos(-z) = pi - acos(z)
	return $V(ac, SIGNBIT(y) ? im : -im);
}
$V cacosh($V z) {
	$T x = z.x, y = z.y;
	if (isnan(x)) return isinf(y) ? $V(cmInf$S(), x) : cmNan2$S();
	if (isnan(y)) {
		if (isinf(x)) return $V(cmInf$S(), y);
		return x == 0.0$L ? $V(y, $PIO2) : cmNan2$S();
	}
	if (isinf(x) || isinf(y)) {
		$T im = isinf(y) ? (isinf(x) ? (x < 0.0$L ? $P3O4 : $PIO4) : $PIO2) : (x < 0.0$L ? $PI : 0.0$L);
		return $V(cmInf$S(), cmCopysign$S(im, y));
	}
	// acosh z = |Im acos z| + i sign(y) Re acos z
	$T re, im, ac;
	cmAsinQ$S(abs(x), abs(y), re, im, ac);
	if (SIGNBIT(x)) ac = cmPiMinus$S(ac);
	return $V(im, cmCopysign$S(ac, y));
}
// atanh(x + iy) = re + i im for finite x, y >= 0.
void cmAtanhQ$S($T x, $T y, out $T re, out $T im) {
	if (x > $CMBIG || y > $CMBIG) { // atanh z = atanh(1/z) + i pi/2, atanh(1/z) = 1/z + O(z^-3)
		$T a = max(x, y), r = min(x, y) / a;
		re = ((x / a) / a) / (1.0$L + r * r);
		im = $PIO2;
		return;
	}
	if (x < $CMSMALL && y < $CMSMALL) { // atanh z = z + O(z^3)
		re = x;
		im = y;
		return;
	}
	$T xm = 1.0$L - x;
	if (abs(xm) < 0.0009765625$L && y < 0.0009765625$L) // (log|1 + z| - log|1 - z|)/2: no underflow
		re = 0.5$L * (cmLogAbs$S(1.0$L + x, y, 0) - cmLogAbs$S(xm, y, 0));
	else
		re = 0.25$L * log1p$S(4.0$L * x / (xm * xm + y * y));
	im = 0.5$L * atan2$S(2.0$L * y, xm * (1.0$L + x) - y * y);
}
$V catanh($V z) {
	$T x = z.x, y = z.y;
	if (isnan(x)) return isinf(y) ? $V(cmCopysign$S(0.0$L, x), cmCopysign$S($PIO2, y)) : cmNan2$S();
	if (isnan(y)) return (isinf(x) || x == 0.0$L) ? $V(cmCopysign$S(0.0$L, x), y) : cmNan2$S();
	if (isinf(x) || isinf(y)) return $V(cmCopysign$S(0.0$L, x), cmCopysign$S($PIO2, y));
	$T re, im;
	cmAtanhQ$S(abs(x), abs(y), re, im);
	return $V(cmCopysign$S(re, x), cmCopysign$S(im, y));
}
$V catan($V z) {
	$V w = catanh($V(-z.y, z.x));
	return $V(w.y, -w.x);
}
`

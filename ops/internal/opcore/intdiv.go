package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/tensor"
)

// Floor division and remainder, as NumPy's floor_divide and remainder (and
// Python's // and %): the quotient rounds toward -Inf and the remainder
// has the divisor's sign.

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"floor_divide": FloorDivide, "remainder": Remainder,
	} {
		builtinBinary(name, f)
	}
}

// builtinBinary registers the binary element-wise op name as f.
func builtinBinary(name string, f func(Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*Op, error)) {
	Builtin(name, func(o Owner, in, out []*tensor.Tensor, _ Attrs) (*Op, error) {
		if err := Inputs(name, in, 2); err != nil {
			return nil, err
		}
		if err := TooMany(name, out, 1); err != nil {
			return nil, err
		}
		return f(o, in[0], in[1], OutAt(out, 0))
	})
}

// builtinUnary registers the unary element-wise op name as f.
func builtinUnary(name string, f func(Owner, *tensor.Tensor, *tensor.Tensor) (*Op, error)) {
	Builtin(name, func(o Owner, in, out []*tensor.Tensor, _ Attrs) (*Op, error) {
		if err := Inputs(name, in, 1); err != nil {
			return nil, err
		}
		if err := TooMany(name, out, 1); err != nil {
			return nil, err
		}
		return f(o, in[0], OutAt(out, 0))
	})
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
func FloorDivide(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "floor_divide", a, b, out)
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
func Remainder(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "remainder", a, b, out)
}

// floorDivideExpr is FloorDivide's expression for dt.
func floorDivideExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	switch {
	case dt == tensor.Float64:
		return "floorDivD(a0, a1)", fmodF64 + floorDivF64, nil
	case IsFloat(dt):
		return "floorDivF(a0, a1)", fmodF32 + floorDivF32, nil
	}
	ct := ComputeType(dt)
	return fmt.Sprintf("floorDivI_%s(a0, a1)", ct), intDivGLSL(dt), nil
}

// remainderExpr is Remainder's expression for dt.
func remainderExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	switch {
	case dt == tensor.Float64:
		return "remD(a0, a1)", fmodF64 + remF64, nil
	case IsFloat(dt):
		return "remF(a0, a1)", fmodF32 + remF32, nil
	}
	ct := ComputeType(dt)
	return fmt.Sprintf("remI_%s(a0, a1)", ct), intDivGLSL(dt), nil
}

// intDivGLSL defines floorDivI_<ct> and remI_<ct> for an integer dtype's
// compute type ct. A divisor of 0 (and, signed, -1, whose quotient may
// overflow) is replaced by 1 before dividing, so no division by zero or
// overflowing division reaches the device, and the result is chosen
// after. The remainder is taken from the truncated quotient and moved to
// the divisor's sign.
func intDivGLSL(dt tensor.Dtype) string {
	ct := ComputeType(dt)
	if !isSigned(dt) {
		return Guard("INTDIV_"+ct, fmt.Sprintf(`%[1]s floorDivI_%[1]s(%[1]s n, %[1]s d) {
	return d == %[1]s(0) ? %[1]s(0) : n / (d == %[1]s(0) ? %[1]s(1) : d);
}
%[1]s remI_%[1]s(%[1]s n, %[1]s d) {
	return d == %[1]s(0) ? %[1]s(0) : n %% (d == %[1]s(0) ? %[1]s(1) : d);
}
`, ct))
	}
	return Guard("INTDIV_"+ct, fmt.Sprintf(`%[1]s floorDivI_%[1]s(%[1]s n, %[1]s d) {
	%[1]s z = %[1]s(0), one = %[1]s(1);
	bool trivial = d == z || d == -one;
	%[1]s s = trivial ? one : d;
	%[1]s q = n / s;
	%[1]s r = n - q * s;
	if (r != z && ((r < z) != (s < z))) q -= one;
	// n // -1 is -n, which wraps for the most negative n (NumPy's result).
	return d == z ? z : (trivial ? z - n : q);
}
%[1]s remI_%[1]s(%[1]s n, %[1]s d) {
	%[1]s z = %[1]s(0), one = %[1]s(1);
	bool trivial = d == z || d == -one;
	%[1]s s = trivial ? one : d;
	%[1]s r = n - (n / s) * s;
	if (r != z && ((r < z) != (s < z))) r += s;
	return trivial ? z : r;
}
`, ct))
}

// fmodF32 defines fmodF, C's fmodf: x - trunc(x/y)*y, exact. The
// significands are integers m * 2^e (e = 1 for subnormals); the remainder
// of mx * 2^(ex-ey) by my is taken 8 bits of the exponent difference at a
// time with 32-bit integer %, then rebuilt as a float with x's sign. x or y
// NaN, x ±Inf or y ±0 give NaN; y ±Inf gives x.
var fmodF32 = Guard("FMOD_F32", `float fmodF(float x, float y) {
	uint ux = floatBitsToUint(x);
	uint sx = ux & 0x80000000u;
	uint ax = ux & 0x7fffffffu, ay = floatBitsToUint(y) & 0x7fffffffu;
	if (ay == 0u || ay > 0x7f800000u || ax >= 0x7f800000u) return uintBitsToFloat(0x7fc00000u);
	if (ax < ay) return x;
	if (ax == ay) return uintBitsToFloat(sx);
	int ex = int(ax >> 23), ey = int(ay >> 23);
	uint mx = ax & 0x7fffffu, my = ay & 0x7fffffu;
	if (ex == 0) ex = 1; else mx |= 0x800000u;
	if (ey == 0) ey = 1; else my |= 0x800000u;
	uint m = mx % my;
	for (int d = ex - ey; d > 0; d -= 8) m = (m << uint(min(d, 8))) % my;
	if (m == 0u) return uintBitsToFloat(sx);
	// The result is m * 2^(ey - 150), m < my < 2^24.
	int s = findMSB(m);
	int e = ey + s - 23;
	uint bits = e >= 1 ? ((uint(e) << 23) | ((m << uint(23 - s)) & 0x7fffffu)) : (m << uint(ey - 1));
	return uintBitsToFloat(bits | sx);
}
`)

// fmodF64 defines fmodD, C's fmod for double, exact, with 64-bit
// integers as uvec2(low, high) words (so that float64 needs no
// shaderInt64): the significands are normalized to [2^52, 2^53) and
// divided one bit of the exponent difference per step (up to about 2100
// steps for the widest differences, 1e308 % 1e-308).
var fmodF64 = Guard("FMOD_F64", `bool geU2(uvec2 a, uvec2 b) { return a.y > b.y || (a.y == b.y && a.x >= b.x); }
uvec2 subU2(uvec2 a, uvec2 b) {
	uint br;
	uint lo = usubBorrow(a.x, b.x, br);
	return uvec2(lo, a.y - b.y - br);
}
// v << n and v >> n for 0 <= n < 64.
uvec2 shlU2(uvec2 v, int n) {
	if (n == 0) return v;
	if (n >= 32) return uvec2(0u, v.x << uint(n - 32));
	return uvec2(v.x << uint(n), (v.y << uint(n)) | (v.x >> uint(32 - n)));
}
uvec2 shrU2(uvec2 v, int n) {
	if (n == 0) return v;
	if (n >= 32) return uvec2(v.y >> uint(n - 32), 0u);
	return uvec2((v.x >> uint(n)) | (v.y << uint(32 - n)), v.y >> uint(n));
}
int msbU2(uvec2 v) { return v.y != 0u ? 32 + findMSB(v.y) : findMSB(v.x); }
double fmodD(double x, double y) {
	uvec2 ux = unpackDouble2x32(x), uy = unpackDouble2x32(y);
	uint sx = ux.y & 0x80000000u;
	uvec2 ax = uvec2(ux.x, ux.y & 0x7fffffffu), ay = uvec2(uy.x, uy.y & 0x7fffffffu);
	if ((ay.x | ay.y) == 0u || geU2(ay, uvec2(1u, 0x7ff00000u)) || ax.y >= 0x7ff00000u)
		return packDouble2x32(uvec2(0u, 0x7ff80000u));
	if (!geU2(ax, ay)) return x;
	if (ax == ay) return packDouble2x32(uvec2(0u, sx));
	// Values are m * 2^(e - 1075), m in [2^52, 2^53).
	int ex = int(ax.y >> 20), ey = int(ay.y >> 20);
	uvec2 mx = uvec2(ax.x, ax.y & 0xfffffu), my = uvec2(ay.x, ay.y & 0xfffffu);
	if (ex == 0) {
		int sh = 52 - msbU2(mx);
		mx = shlU2(mx, sh);
		ex = 1 - sh;
	} else {
		mx.y |= 0x100000u;
	}
	if (ey == 0) {
		int sh = 52 - msbU2(my);
		my = shlU2(my, sh);
		ey = 1 - sh;
	} else {
		my.y |= 0x100000u;
	}
	uvec2 m = geU2(mx, my) ? subU2(mx, my) : mx;
	for (int d = ex - ey; d > 0; d--) {
		m = uvec2(m.x << 1, (m.y << 1) | (m.x >> 31));
		if (geU2(m, my)) m = subU2(m, my);
	}
	if ((m.x | m.y) == 0u) return packDouble2x32(uvec2(0u, sx));
	// The result is m * 2^(ey - 1075), m < my; a subnormal one loses no
	// bits (x and y are multiples of 2^-1074, so is the remainder).
	int s = msbU2(m);
	int e = ey + s - 52;
	uvec2 bits;
	if (e >= 1) {
		bits = shlU2(m, 52 - s);
		bits.y = (bits.y & 0xfffffu) | (uint(e) << 20);
	} else {
		bits = ey >= 1 ? shlU2(m, ey - 1) : shrU2(m, 1 - ey);
	}
	bits.y |= sx;
	return packDouble2x32(bits);
}
`)

// floorDivF32 and floorDivF64 are NumPy's npy_floor_divide (npy_divmod's
// quotient) over fmodF and fmodD, but for the array API standard's
// preferred values where one operand is infinite (floor(a/b), as NumPy
// 2): ±inf // finite is ±inf (NumPy 1.24: NaN) and finite // ±inf is a
// signed zero (NumPy 1.24: -1 for opposite signs). C's truth tests (if
// (mod), if (div)) are !(v == 0), true for NaN, as in C.
var floorDivF32 = Guard("FLOORDIV_F32", `float floorDivF(float a, float b) {
	if (b == 0.0) return a / b;
	if (isinf(a) && !isinf(b) && !isnan(b)) return a / b;
	if (isinf(b) && !isinf(a) && !isnan(a) && !(a == 0.0)) return uintBitsToFloat(((a < 0.0) != (b < 0.0)) ? 0x80000000u : 0u);
	float m = fmodF(a, b);
	precise float d = (a - m) / b;
	if (!(m == 0.0) && ((b < 0.0) != (m < 0.0))) d -= 1.0;
	if (d == 0.0) return uintBitsToFloat(floatBitsToUint(a / b) & 0x80000000u);
	precise float f = floor(d);
	if (d - f > 0.5) f += 1.0;
	return f;
}
`)

var floorDivF64 = Guard("FLOORDIV_F64", `double floorDivD(double a, double b) {
	if (b == 0.0lf) return a / b;
	if (isinf(a) && !isinf(b) && !isnan(b)) return a / b;
	if (isinf(b) && !isinf(a) && !isnan(a) && !(a == 0.0lf)) return packDouble2x32(uvec2(0u, ((a < 0.0lf) != (b < 0.0lf)) ? 0x80000000u : 0u));
	double m = fmodD(a, b);
	precise double d = (a - m) / b;
	if (!(m == 0.0lf) && ((b < 0.0lf) != (m < 0.0lf))) d -= 1.0lf;
	if (d == 0.0lf) return packDouble2x32(uvec2(0u, unpackDouble2x32(a / b).y & 0x80000000u));
	precise double f = floor(d);
	if (d - f > 0.5lf) f += 1.0lf;
	return f;
}
`)

// remF32 and remF64 are NumPy's npy_remainder (npy_divmod's modulus).
var remF32 = Guard("REM_F32", `float remF(float a, float b) {
	precise float m = fmodF(a, b);
	if (b == 0.0) return m;
	if (m == 0.0) return uintBitsToFloat(floatBitsToUint(b) & 0x80000000u);
	if ((b < 0.0) != (m < 0.0)) m += b;
	return m;
}
`)

var remF64 = Guard("REM_F64", `double remD(double a, double b) {
	precise double m = fmodD(a, b);
	if (b == 0.0lf) return m;
	if (m == 0.0lf) return packDouble2x32(uvec2(0u, unpackDouble2x32(b).y & 0x80000000u));
	if ((b < 0.0lf) != (m < 0.0lf)) m += b;
	return m;
}
`)

package linalg

import (
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// The scalar arithmetic of the factorization kernels (LU, Cholesky, QR,
// det), written once over the element type T of the matrices and its
// real part type R: for float32 and float64 T and R are the same and the
// functions are the plain operators; for complex64 and complex128 T is
// vec2 or dvec2 and they call complex.go's helpers (cmulF, cdivF,
// cabsF...), so the kernels' text is the same for every dtype:
//
//	laMul(a, b), laDiv(a, b)  a·b, a/b
//	laConj(a)                 the conjugate (a itself for real dtypes)
//	laAbs(a)                  |a|, of type R
//	laRe(a)                   the real part, of type R
//	laFromRe(r)               r + 0i
//	laHasIm(a)                a's imaginary part is not zero (false for real dtypes)
const laScalarRealSrc = `$T laMul($T a, $T b) { return a * b; }
$T laDiv($T a, $T b) { return a / b; }
$T laConj($T a) { return a; }
$T laAbs($T a) { return abs(a); }
$T laRe($T a) { return a; }
$T laFromRe($T r) { return r; }
bool laHasIm($T a) { return false; }
`

const laScalarComplexSrc = `$C laMul($C a, $C b) { return cmul$S(a, b); }
$C laDiv($C a, $C b) { return cdiv$S(a, b); }
$C laConj($C a) { return $C(a.x, -a.y); }
$T laAbs($C a) { return cabs$S(a); }
$T laRe($C a) { return a.x; }
$C laFromRe($T r) { return $C(r, $T(0)); }
bool laHasIm($C a) { return a.y != $T(0); }
`

// laScalarGLSL returns the la* helpers for dt (float32, float64,
// complex64 or complex128), with the complex helpers they call.
func laScalarGLSL(dt tensor.Dtype) string {
	if !dt.IsComplex() {
		return opcore.Guard("LA_SCALAR", strings.ReplaceAll(laScalarRealSrc, "$T", opcore.GLSLType(dt)))
	}
	c, t, s := "vec2", "float", "F"
	if dt == tensor.Complex128 {
		c, t, s = "dvec2", "double", "D"
	}
	src := strings.NewReplacer("$C", c, "$T", t, "$S", s).Replace(laScalarComplexSrc)
	return opcore.ComplexGLSL(dt) + opcore.Guard("LA_SCALAR", src)
}

// laOne is 1 (1 + 0i for complex dtypes) in GLSL type t.
func laOne(dt tensor.Dtype) string {
	if dt.IsComplex() {
		return opcore.GLSLType(dt) + "(1, 0)"
	}
	return opcore.GLSLType(dt) + "(1)"
}

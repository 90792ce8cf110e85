package linalg

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// Complex matrices in the spectral linalg ops (svd, svdvals, pinv,
// matrix_rank, the norms, eigh, eigvalsh). The Jacobi work matrices W and
// V hold elements of the input's kind: real ones in the real compute
// dtype, complex ones as vec2 (complex64) or dvec2 (complex128) with the
// arithmetic of complex.go (cmulF/cmulD, cabsF/cabsD); column norms,
// singular values, scales and shifts stay real. linEl writes a kernel's
// element arithmetic once for both kinds.
//
// The complex one-sided Jacobi rotation of columns x = w_p, y = w_q with
// γ = x^H y = |γ| e (e a unit phase), α = ||x||², β = ||y||²: ζ = (β - α)
// / 2|γ|, t = sign(ζ) / (|ζ| + sqrt(1 + ζ²)), c = 1 / sqrt(1 + t²), s = c t
// (all real), then x' = c x - s ē y and y' = s e x + c y: a unitary
// rotation with x'^H y' = e (|γ|(c² - s²) - cs(β - α)) = 0. For real
// matrices e = sign(γ) and it is the real rotation.

// linEl is the element type of the Jacobi work matrices: the real
// compute dtype acc, or its complex dtype.
type linEl struct {
	acc tensor.Dtype // the real compute dtype: float32 or float64
	cx  bool
}

// complexOfReal returns the complex dtype whose parts are acc.
func complexOfReal(acc tensor.Dtype) tensor.Dtype {
	if acc == tensor.Float64 {
		return tensor.Complex128
	}
	return tensor.Complex64
}

// dt is the dtype of an element.
func (e linEl) dt() tensor.Dtype {
	if e.cx {
		return complexOfReal(e.acc)
	}
	return e.acc
}

// t is the GLSL type of an element, r that of a real value.
func (e linEl) t() string { return opcore.GLSLType(e.dt()) }
func (e linEl) r() string { return opcore.GLSLType(e.acc) }

// lit is the element of real value v.
func (e linEl) lit(v string) string {
	if e.cx {
		return fmt.Sprintf("%s(%s, 0.0)", e.t(), v)
	}
	return fmt.Sprintf("%s(%s)", e.t(), v)
}

// fromReal makes an element of a real expression.
func (e linEl) fromReal(v string) string {
	if e.cx {
		return fmt.Sprintf("%s(%s, %s(0))", e.t(), v, e.r())
	}
	return v
}

// mul is a*b; cjmul conj(a)*b.
func (e linEl) mul(a, b string) string {
	if e.cx {
		return opcore.Cfn("cmul", e.dt(), a+", "+b)
	}
	return "(" + a + ") * (" + b + ")"
}

func (e linEl) cjmul(a, b string) string {
	if e.cx {
		return e.mul(e.conj(a), b)
	}
	return "(" + a + ") * (" + b + ")"
}

// conj is conj(x).
func (e linEl) conj(x string) string {
	if e.cx {
		return fmt.Sprintf("%s((%[2]s).x, -(%[2]s).y)", e.t(), x)
	}
	return x
}

// norm2 is |x|², abs |x| (hypot-style for complex).
func (e linEl) norm2(x string) string {
	if e.cx {
		return "dot(" + x + ", " + x + ")"
	}
	return "(" + x + ") * (" + x + ")"
}

func (e linEl) abs(x string) string {
	if e.cx {
		return opcore.Cfn("cabs", e.dt(), x)
	}
	return "abs(" + x + ")"
}

// helpers is the GLSL the element arithmetic needs.
func (e linEl) helpers() string {
	if e.cx {
		return opcore.ComplexGLSL(e.dt())
	}
	return ""
}

// jacobiLoadCxGLSL: W = A / max|a| column by column for complex x, with
// the scale (max|a| from a reduction of |x|): A = x, or x^H (trans; so
// that the work is tall), or lower: the Hermitian matrix of x's lower
// triangle (the diagonal's imaginary parts dropped, as LAPACK's).
// Bindings: x, max, scale, W. Push: B, M, N.
func jacobiLoadCxGLSL(dt tensor.Dtype, el linEl, trans, lower bool) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, dt, el.acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s x[]; };
layout(std430, binding = 1) readonly buffer B1 { %[2]s mx[]; };
layout(std430, binding = 2) writeonly buffer B2 { %[2]s scale[]; };
layout(std430, binding = 3) writeonly buffer B3 { %[3]s w[]; };
layout(push_constant) uniform P { uint B; uint M; uint N; } p;
void main() {
	uint e = gid();
	uint mat = p.M * p.N;
	if (e >= p.B * mat) return;
	uint b = e / mat, rem = e %% mat, j = rem / p.M, i = rem %% p.M;
	%[2]s c = mx[b];
	%[2]s inv = c > %[2]s(0) ? %[2]s(1) / c : %[2]s(1);
`, opcore.GLSLType(dt), el.r(), el.t())
	switch {
	case lower:
		fmt.Fprintf(&b, `	%[1]s v = %[1]s(x[b * mat + (i >= j ? i * p.N + j : j * p.N + i)]);
	if (i < j) v.y = -v.y;
	if (i == j) v.y = %[2]s(0);
`, el.t(), el.r())
	case trans:
		fmt.Fprintf(&b, "\t%[1]s v = %[1]s(x[b * mat + j * p.M + i]);\n\tv.y = -v.y;\n", el.t())
	default:
		fmt.Fprintf(&b, "\t%[1]s v = %[1]s(x[b * mat + i * p.N + j]);\n", el.t())
	}
	b.WriteString("\tw[e] = v * inv;\n\tif (rem == 0u) scale[b] = c;\n}\n")
	return b.String()
}

// linConjGLSL: x = conj(x) in place (complex). Push: n.
func linConjGLSL(dt tensor.Dtype) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, dt)
	fmt.Fprintf(&b, `layout(std430, binding = 0) buffer B0 { %s x[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
	uint e = gid();
	if (e < p.n) x[e].y = -x[e].y;
}
`, opcore.GLSLType(dt))
	return b.String()
}

package linalg

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// GLSL of the Jacobi decomposition (jacobi.go). W holds each
// matrix's columns one after another (column j of matrix b at
// b*N*M + j*M), V likewise (N×N).

// linLit writes v as a literal of the GLSL type of acc.
func linLit(acc tensor.Dtype, v float64) string {
	if acc == tensor.Float64 {
		return fmt.Sprintf("double(%.17g)", v)
	}
	return fmt.Sprintf("float(%.9g)", v)
}

// linHead opens a kernel of one invocation per element: header, local
// size, gid().
func linHead(b *strings.Builder, local int, dtypes ...tensor.Dtype) {
	b.WriteString(opcore.Header(dtypes...))
	fmt.Fprintf(b, "layout(local_size_x = %d) in;\n", local)
	b.WriteString(opcore.IndexGLSL)
	b.WriteString(wgidGLSL)
}

// jacobiLoadGLSL: W = A / max|a| column by column (A = x, or xᵀ, or
// lower: the symmetric matrix of x's lower triangle), and the scale.
// Bindings: x, max, min, scale, W. Push: B, M, N.
func jacobiLoadGLSL(dt, acc tensor.Dtype, trans, lower bool) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, dt, acc)
	t, a := opcore.GLSLType(dt), opcore.GLSLType(acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s x[]; };
layout(std430, binding = 1) readonly buffer B1 { %[2]s mx[]; };
layout(std430, binding = 2) readonly buffer B2 { %[2]s mn[]; };
layout(std430, binding = 3) writeonly buffer B3 { %[2]s scale[]; };
layout(std430, binding = 4) writeonly buffer B4 { %[2]s w[]; };
layout(push_constant) uniform P { uint B; uint M; uint N; } p;
void main() {
	uint e = gid();
	uint mat = p.M * p.N;
	if (e >= p.B * mat) return;
	uint b = e / mat, rem = e %% mat, j = rem / p.M, i = rem %% p.M;
	%[2]s hi = mx[b], lo = mn[b];
	%[2]s c = (isnan(hi) || isnan(lo)) ? hi + lo : max(hi, -lo);
	%[2]s inv = c > %[2]s(0) ? %[2]s(1) / c : %[2]s(1);
`, t, a)
	switch {
	case lower:
		b.WriteString("\tuint src = b * mat + (i >= j ? i * p.N + j : j * p.N + i);\n")
	case trans:
		b.WriteString("\tuint src = b * mat + j * p.M + i;\n")
	default:
		b.WriteString("\tuint src = b * mat + i * p.N + j;\n")
	}
	fmt.Fprintf(&b, `	w[e] = %s(x[src]) * inv;
	if (rem == 0u) scale[b] = c;
}
`, a)
	return b.String()
}

// jacobiInitGLSL: the flags 0 and V = I. Bindings: flags [, V]. Push: B,
// N.
func jacobiInitGLSL(el linEl, vectors bool) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, el.acc)
	a := el.t()
	b.WriteString("layout(std430, binding = 0) writeonly buffer B0 { uint flag[]; };\n")
	if vectors {
		fmt.Fprintf(&b, "layout(std430, binding = 1) writeonly buffer B1 { %s v[]; };\n", a)
	}
	b.WriteString(`layout(push_constant) uniform P { uint B; uint N; } p;
void main() {
	uint e = gid();
	if (e < 2u * p.B) flag[e] = 0u;
`)
	if vectors {
		fmt.Fprintf(&b, `	uint nn = p.N * p.N;
	if (e < p.B * nn) {
		uint rem = e %% nn;
		v[e] = rem / p.N == rem %% p.N ? %[2]s : %[1]s(0);
	}
`, a, el.lit("1"))
	}
	b.WriteString("}\n")
	return b.String()
}

// linAbsGLSL: y = |x| (y real). Bindings: x, y. Push: n.
func linAbsGLSL(el linEl) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, el.acc)
	b.WriteString(el.helpers())
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s x[]; };
layout(std430, binding = 1) writeonly buffer B1 { %[2]s y[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
	uint e = gid();
	if (e < p.n) y[e] = %[3]s;
}
`, el.t(), el.r(), el.abs("x[e]"))
	return b.String()
}

// jacobiAddDiagGLSL: W's diagonal += shift (square W). Bindings: W,
// shift. Push: B, N.
func jacobiAddDiagGLSL(el linEl) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, el.acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) buffer B0 { %[1]s w[]; };
layout(std430, binding = 1) readonly buffer B1 { %[2]s shift[]; };
layout(push_constant) uniform P { uint B; uint N; } p;
void main() {
	uint e = gid();
	if (e >= p.B * p.N) return;
	uint b = e / p.N, j = e %% p.N;
	w[b * p.N * p.N + j * p.N + j] += %[3]s;
}
`, el.t(), el.r(), el.fromReal("shift[b]"))
	return b.String()
}

// jacobiStepGLSL: steps s0..s1-1 of a sweep (see jacobi.go; for
// complex elements the rotation of spectral_complex_glsl.go).
// Bindings: W, flags [, V]. Push: B, M, N, Np, G, s0, s1.
func jacobiStepGLSL(el linEl, pl jacobiPlan, tol float64, vectors bool) string {
	var b strings.Builder
	linHead(&b, pl.L, el.acc)
	b.WriteString(el.helpers())
	a, t := el.r(), el.t()
	fmt.Fprintf(&b, `layout(std430, binding = 0) buffer B0 { %[1]s w[]; };
layout(std430, binding = 1) buffer B1 { uint flag[]; };
`, t)
	if vectors {
		fmt.Fprintf(&b, "layout(std430, binding = 2) buffer B2 { %s v[]; };\n", t)
	}
	fmt.Fprintf(&b, `layout(push_constant) uniform P { uint B; uint M; uint N; uint Np; uint G; uint s0; uint s1; } p;
const uint R = %[2]du, PP = %[3]du;
const %[1]s TOL = %[4]s;
`, a, pl.R, pl.P, linLit(el.acc, tol))
	if pl.R > 1 {
		fmt.Fprintf(&b, "shared %[1]s sa[%[3]d], sb[%[3]d];\nshared %[2]s sg[%[3]d];\n", a, t, pl.L)
	}
	fmt.Fprintf(&b, `void main() {
	uint g = wgid();
	uint b = g / p.G;
	if (b >= p.B || flag[p.B + b] != 0u) return;
	uint lid = gl_LocalInvocationID.x;
	uint k = (g %% p.G) * PP + lid / R, r = lid %% R;
	uint n1 = p.Np - 1u;
	uint wb = b * p.N * p.M, vb = b * p.N * p.N;
	bool rot = false;
	for (uint st = p.s0; st < p.s1; st++) {
		uint a0 = k == 0u ? st %% n1 : (st + k) %% n1;
		uint a1 = k == 0u ? n1 : (st + n1 - k %% n1) %% n1;
		uint pc = min(a0, a1), qc = max(a0, a1);
		bool act = k < p.Np / 2u && qc < p.N;
		%[1]s al = %[1]s(0), be = %[1]s(0);
		%[2]s ga = %[2]s(0);
		if (act) {
			for (uint i = r; i < p.M; i += R) {
				%[2]s x = w[wb + pc * p.M + i], y = w[wb + qc * p.M + i];
				al += %[3]s; be += %[4]s; ga += %[5]s;
			}
		}
`, a, t, el.norm2("x"), el.norm2("y"), el.cjmul("x", "y"))
	if pl.R > 1 {
		b.WriteString(`		sa[lid] = al; sb[lid] = be; sg[lid] = ga;
		barrier();
		for (uint h = R / 2u; h > 0u; h >>= 1) {
			if (r < h) { sa[lid] += sa[lid + h]; sb[lid] += sb[lid + h]; sg[lid] += sg[lid + h]; }
			barrier();
		}
		al = sa[lid - r]; be = sb[lid - r]; ga = sg[lid - r];
`)
	}
	// Real: ζ = (β - α) / 2γ and x' = c x - s y, y' = s x + c y. Complex:
	// ζ = (β - α) / 2|γ|, e = γ/|γ|, x' = c x - s ē y, y' = s e x + c y.
	ze, pre := "(be - al) / (%[1]s(2) * ga)", ""
	wp, wq := "c * x - s * y", "s * x + c * y"
	if el.cx {
		ze = "(be - al) / (%[1]s(2) * ag)"
		pre = fmt.Sprintf("%[1]s se = (s / ag) * ga, sc = %[2]s;\n", t, el.conj("se"))
		wp, wq = "c * x - "+el.mul("sc", "y"), el.mul("se", "x")+" + c * y"
		if jacobiHooks.mutate {
			wp = "c * x - " + el.mul("se", "y") // the conjugate dropped
		}
	} else if jacobiHooks.mutate {
		wq = "s * x - c * y"
	}
	fmt.Fprintf(&b, `		%[1]s ag = %[3]s;
		if (act && ag > TOL * sqrt(al) * sqrt(be)) {
			%[1]s ze = `+ze+`;
			%[1]s az = abs(ze);
			%[1]s t = az > %[1]s(1e15) ? %[1]s(0.5) / ze : (ze < %[1]s(0) ? %[1]s(-1) : %[1]s(1)) / (az + sqrt(%[1]s(1) + ze * ze));
			%[1]s c = %[1]s(1) / sqrt(%[1]s(1) + t * t), s = c * t;
			if (s != %[1]s(0)) {
				rot = true;
				%[4]s
				for (uint i = r; i < p.M; i += R) {
					uint ip = wb + pc * p.M + i, iq = wb + qc * p.M + i;
					%[2]s x = w[ip], y = w[iq];
					w[ip] = %[5]s;
					w[iq] = %[6]s;
				}
`, a, t, el.abs("ga"), pre, wp, wq)
	if vectors {
		wq := "s * x + c * y"
		if el.cx {
			wq = el.mul("se", "x") + " + c * y"
		}
		fmt.Fprintf(&b, `				for (uint i = r; i < p.N; i += R) {
					uint ip = vb + pc * p.N + i, iq = vb + qc * p.N + i;
					%[1]s x = v[ip], y = v[iq];
					v[ip] = %[2]s;
					v[iq] = %[3]s;
				}
`, t, wp, wq)
	}
	b.WriteString(`			}
		}
		memoryBarrierBuffer();
		barrier();
	}
	if (rot) flag[b] = 1u;
}
`)
	return b.String()
}

// jacobiConvGLSL: after a sweep, a matrix whose flag stayed clear is
// converged; the flag is cleared. Binding: flags. Push: B.
func jacobiConvGLSL() string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize)
	b.WriteString(`layout(std430, binding = 0) buffer B0 { uint flag[]; };
layout(push_constant) uniform P { uint B; } p;
void main() {
	uint e = gid();
	if (e >= p.B) return;
	if (flag[e] == 0u) flag[p.B + e] = 1u;
	flag[e] = 0u;
}
`)
	return b.String()
}

// jacobiNormsGLSL: s = the norms of W's columns, a workgroup of 64 per
// column. Bindings: W, s. Push: columns, M.
func jacobiNormsGLSL(el linEl) string {
	var b strings.Builder
	linHead(&b, 64, el.acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[2]s w[]; };
layout(std430, binding = 1) writeonly buffer B1 { %[1]s s[]; };
layout(push_constant) uniform P { uint cols; uint M; } p;
shared %[1]s red[64];
void main() {
	uint c = wgid();
	if (c >= p.cols) return;
	uint lid = gl_LocalInvocationID.x;
	%[1]s sum = %[1]s(0);
	for (uint i = lid; i < p.M; i += 64u) {
		%[2]s x = w[c * p.M + i];
		sum += %[3]s;
	}
	red[lid] = sum;
	barrier();
	for (uint h = 32u; h > 0u; h >>= 1) {
		if (lid < h) red[lid] += red[lid + h];
		barrier();
	}
	if (lid == 0u) s[c] = sqrt(red[0]);
}
`, el.r(), el.t(), el.norm2("x"))
	return b.String()
}

// jacobiSortGLSL: perm = the columns by descending norm (ascending for
// eigh), ties by index, NaN last. Bindings: s, perm. Push: B, N.
func jacobiSortGLSL(acc tensor.Dtype, ascending bool) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, acc)
	a := opcore.GLSLType(acc)
	nan, cmp := a+"(-1)", ">"
	if ascending {
		nan, cmp = linLit(acc, 3e38), "<"
	}
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s s[]; };
layout(std430, binding = 1) writeonly buffer B1 { uint perm[]; };
layout(push_constant) uniform P { uint B; uint N; } p;
%[1]s key(uint i) { %[1]s v = s[i]; return isnan(v) ? %[2]s : v; }
void main() {
	uint e = gid();
	if (e >= p.B * p.N) return;
	uint b = e / p.N, j = e %% p.N, base = b * p.N;
	%[1]s kj = key(e);
	uint rank = 0u;
	for (uint k = 0u; k < p.N; k++) {
		%[1]s kk = key(base + k);
		if (kk %[3]s kj || (kk == kj && k < j)) rank++;
	}
	perm[base + rank] = j;
}
`, a, nan, cmp)
	return b.String()
}

package linalg

import (
	"fmt"
	"math"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// The kernels of eig and eigvals (see eig.go). Matrices are row-major
// [B, N, N] of the complex compute type C (vec2 or dvec2) with real
// parts R; the QR state st holds 8 uints per matrix: hi+1 (0: done), the
// sweep's next rotation k+1 (0: none, a sweep starts), the sweep's low
// end, sweeps since the last deflation, sweeps in all, and the failure
// flag.

// eigLit is v as a GLSL literal of the real type of acc.
func eigLit(acc tensor.Dtype, v float64) string {
	if acc == tensor.Float64 {
		return fmt.Sprintf("%.17elf", v)
	}
	return fmt.Sprintf("%.9e", v)
}

// eigDefs are the types, constants and helpers every eig kernel shares.
func eigDefs(wk *eigWork) string {
	acc := wk.acc
	c, r := opcore.GLSLType(wk.cdt), opcore.GLSLType(acc)
	safmin := 0x1p-126
	big := 1e15
	if acc == tensor.Float64 {
		safmin, big = 0x1p-1022, 1e150
	}
	ulp := epsOf(acc)
	var b strings.Builder
	fmt.Fprintf(&b, "#define C %s\n#define R %s\n", c, r)
	fmt.Fprintf(&b, "const R ULP = %s;\nconst R SMLNUM = %s;\nconst R BIG = %s;\n",
		eigLit(acc, ulp), eigLit(acc, safmin*math.Max(1, float64(wk.N))/ulp), eigLit(acc, big))
	b.WriteString(laScalarGLSL(wk.cdt))
	b.WriteString("R abs1(C a) { return abs(a.x) + abs(a.y); }\n")
	return b.String()
}

// eigGroupHead starts a kernel of one workgroup of eigWG invocations per
// item: the header, eigDefs and WG.
func eigGroupHead(b *strings.Builder, wk *eigWork) {
	linHead(b, eigWG, wk.acc, wk.cdt)
	b.WriteString(eigDefs(wk))
	fmt.Fprintf(b, "const uint WG = %du;\n", eigWG)
}

// eigFailedGLSL is failed(b): whether matrix b failed or did not converge
// (its QR state st, bound, and push member N).
const eigFailedGLSL = `bool failed(uint b) {
	return st[b * 8u + 5u] != 0u || (p.N > 1u && st[b * 8u] != 0u);
}
`

// eigLoadGLSL: H = A / max|a_ij|, Z = I, D = I, the balancing state 0,
// and the scale. Bindings: x, max [, min for real x], scale, H, D, the
// balancing state [, Z]. Push: total, N.
func eigLoadGLSL(dt tensor.Dtype, wk *eigWork) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, dt, wk.acc, wk.cdt)
	b.WriteString(eigDefs(wk))
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %s x[]; };
layout(std430, binding = 1) readonly buffer B1 { R mx[]; };
`, opcore.GLSLType(dt))
	bind := 2
	cx := dt.IsComplex()
	if !cx {
		b.WriteString("layout(std430, binding = 2) readonly buffer B2 { R mn[]; };\n")
		bind = 3
	}
	fmt.Fprintf(&b, `layout(std430, binding = %d) writeonly buffer B3 { R scale[]; };
layout(std430, binding = %d) writeonly buffer B4 { C h[]; };
layout(std430, binding = %d) writeonly buffer B5 { R dd[]; };
layout(std430, binding = %d) writeonly buffer B6 { uint bst[]; };
`, bind, bind+1, bind+2, bind+3)
	if wk.vectors {
		fmt.Fprintf(&b, "layout(std430, binding = %d) writeonly buffer B7 { C z[]; };\n", bind+4)
	}
	b.WriteString(`layout(push_constant) uniform P { uint total; uint N; } p;
void main() {
	uint e = gid();
	if (e >= p.total) return;
	uint mat = p.N * p.N, b = e / mat, rem = e % mat;
`)
	if cx {
		b.WriteString("\tR c = mx[b];\n\tC v = C(x[e]);\n")
	} else {
		b.WriteString("\tR hi = mx[b], lo = mn[b];\n\tR c = (isnan(hi) || isnan(lo)) ? hi + lo : max(hi, -lo);\n\tC v = C(R(x[e]), R(0));\n")
	}
	b.WriteString(`	R inv = c > R(0) ? R(1) / c : R(1);
	h[e] = v * inv;
	if (rem == 0u) scale[b] = c;
	if (rem < p.N) dd[b * p.N + rem] = R(1);
	if (rem < 4u) bst[b * 4u + rem] = 0u;
`)
	if wk.vectors {
		b.WriteString("\tz[e] = rem / p.N == rem % p.N ? C(1, 0) : C(0);\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// eigHessKernel is the Hessenberg reduction's stepped kernel (see
// eigHessenberg): step s works on column c = s/2. Bindings: H, tau [, Z].
// Push (after the stepped kernel's own): n.
func eigHessKernel(wk *eigWork) *stepKernel {
	rows := "p.n"
	if wk.vectors {
		rows = "2u * p.n"
	}
	var decls strings.Builder
	decls.WriteString(eigDefs(wk))
	decls.WriteString(`layout(std430, binding = 0) coherent buffer B0 { C h[]; };
layout(std430, binding = 1) coherent buffer B1 { C tau[]; };
`)
	if wk.vectors {
		decls.WriteString("layout(std430, binding = 2) coherent buffer B2 { C z[]; };\n")
	}
	decls.WriteString("shared R sv[WG];\n")
	// The row update of row r of H (r < n) or of Z: x <- x - tau (x.v) vᴴ
	// over columns c+1.., v = (1, h[c+2][c], ...).
	rowUpd := func(arr string) string {
		return fmt.Sprintf(`		C d = %[1]s[rb + c + 1u];
		for (uint j = c + 2u; j < N; j++) {
			d += laMul(%[1]s[rb + j], h[base + j * N + c]);
		}
		d = laMul(d, ta);
		%[1]s[rb + c + 1u] -= d;
		for (uint j = c + 2u; j < N; j++) {
			%[1]s[rb + j] -= laMul(d, laConj(h[base + j * N + c]));
		}`, arr)
	}
	update := fmt.Sprintf(`	uint N = p.n, base = b * N * N, c = k / 2u;
	C ta = tau[b * N + c];
	if (ta == C(0)) {
		return;
	}
	if ((k & 1u) == 0u) {
		uint j = c + 1u + e;
		C d = h[base + (c + 1u) * N + j];
		for (uint i = c + 2u; i < N; i++) {
			d += laMul(laConj(h[base + i * N + c]), h[base + i * N + j]);
		}
		d = laMul(laConj(ta), d);
		h[base + (c + 1u) * N + j] -= d;
		for (uint i = c + 2u; i < N; i++) {
			h[base + i * N + j] -= laMul(h[base + i * N + c], d);
		}
		return;
	}
	if (e < N) {
		uint rb = base + e * N;
%s
	}`, rowUpd("h"))
	if wk.vectors {
		update += fmt.Sprintf(` else {
		uint rb = base + (e - N) * N;
%s
	}`, rowUpd("z"))
	}
	return &stepKernel{
		dt:    wk.cdt,
		push:  "uint n;",
		decls: decls.String(),
		// LAPACK's larfg on column c below the diagonal: H = I - tau v vᴴ,
		// v's first entry 1, beta real.
		panel: fmt.Sprintf(`	uint N = p.n, base = b * N * N, c = k / 2u;
	if ((k & 1u) != 0u) {
		return;
	}
	R s2 = R(0);
	for (uint i = c + 2u + tid; i < N; i += WG) {
		C v = h[base + i * N + c];
		s2 += dot(v, v);
	}
	sv[tid] = s2;
	C alpha = h[base + (c + 1u) * N + c];
%s	s2 = sv[0];
	C ta = C(0);
	if (s2 != R(0) || laHasIm(alpha)) {
		R nrm = sqrt(dot(alpha, alpha) + s2);
		R beta = alpha.x >= R(0) ? -nrm : nrm;
		C v0 = alpha - laFromRe(beta);
		ta = laDiv(laFromRe(beta) - alpha, laFromRe(beta));
		for (uint i = c + 2u + tid; i < N; i += WG) {
			h[base + i * N + c] = laDiv(h[base + i * N + c], v0);
		}
		if (tid == 0u) {
			h[base + (c + 1u) * N + c] = laFromRe(beta);
		}
	}
	if (tid == 0u) {
		tau[b * N + c] = ta;
	}`, treeGLSL("sv[tid] += sv[tid + s];")),
		update: update,
		stepK:  "s",
		count:  fmt.Sprintf("(k & 1u) != 0u ? %s : p.n - k / 2u - 1u", rows),
	}
}

// eigCleanGLSL zeroes H below the subdiagonal (the reflections' vectors)
// and sets the QR state: hi = N-1, or done and failed where the scale is
// not finite. Bindings: H, st, scale. Push: total, N.
func eigCleanGLSL(wk *eigWork) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, wk.acc, wk.cdt)
	b.WriteString(eigDefs(wk))
	b.WriteString(`layout(std430, binding = 0) buffer B0 { C h[]; };
layout(std430, binding = 1) writeonly buffer B1 { uint st[]; };
layout(std430, binding = 2) readonly buffer B2 { R scale[]; };
layout(push_constant) uniform P { uint total; uint N; } p;
void main() {
	uint e = gid();
	if (e >= p.total) return;
	uint mat = p.N * p.N, b = e / mat, rem = e % mat, i = rem / p.N, j = rem % p.N;
	if (i > j + 1u) h[e] = C(0);
	if (rem == 0u) {
		R s = scale[b];
		bool bad = isnan(s) || isinf(s);
		st[b * 8u] = bad ? 0u : p.N;
		for (uint q = 1u; q < 5u; q++) st[b * 8u + q] = 0u;
		st[b * 8u + 5u] = bad ? 1u : 0u;
	}
}
`)
	return b.String()
}

// eigValuesGLSL: w = T's diagonal times the scale, NaN where the matrix
// failed (or has not converged). Bindings: H, st, scale, w. Push: total,
// N.
func eigValuesGLSL(wk *eigWork) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, wk.acc, wk.cdt)
	b.WriteString(eigDefs(wk))
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { C h[]; };
layout(std430, binding = 1) readonly buffer B1 { uint st[]; };
layout(std430, binding = 2) readonly buffer B2 { R scale[]; };
layout(std430, binding = 3) writeonly buffer B3 { C w[]; };
layout(push_constant) uniform P { uint total; uint N; } p;
%[2]svoid main() {
	uint e = gid();
	if (e >= p.total) return;
	uint b = e / p.N, i = e %% p.N;
	w[e] = failed(b) ? C(%[1]s) : h[(b * p.N + i) * p.N + i] * scale[b];
}
`, nanGLSL(opcore.GLSLType(wk.acc)), eigFailedGLSL)
	return b.String()
}

// eigTriVecGLSL: column k of Y = the eigenvector of upper triangular T for
// T[k][k], with y_k = 1, by back substitution (a workgroup per column;
// near-zero pivots perturbed to smin, the column rescaled where an entry
// passes BIG). Bindings: H (T), Y. Push: total (B·N), N.
func eigTriVecGLSL(wk *eigWork) string {
	var b strings.Builder
	eigGroupHead(&b, wk)
	b.WriteString(`layout(std430, binding = 0) readonly buffer B0 { C h[]; };
layout(std430, binding = 1) coherent buffer B1 { C y[]; };
layout(push_constant) uniform P { uint total; uint N; } p;
shared C sY;
shared R sF;
void main() {
	uint g = wgid();
	if (g >= p.total) return;
	uint tid = gl_LocalInvocationIndex;
	uint N = p.N, b = g / N, k = g % N, base = b * N * N;
	C lam = h[base + k * N + k];
	R smin = max(ULP * abs1(lam), SMLNUM);
	for (uint i = tid; i < N; i += WG) {
		y[base + i * N + k] = i < k ? -h[base + i * N + k] : (i == k ? C(1, 0) : C(0));
	}
	memoryBarrierBuffer();
	barrier();
	for (uint ii = k; ii > 0u; ii--) {
		uint i = ii - 1u;
		if (tid == 0u) {
			C d = h[base + i * N + i] - lam;
			if (abs1(d) < smin) d = C(smin, R(0));
			C yi = laDiv(y[base + i * N + k], d);
			R m = abs1(yi);
			y[base + i * N + k] = yi;
			sY = yi;
			sF = m > BIG ? R(1) / m : R(1);
		}
		memoryBarrierBuffer();
		barrier();
		C yi = sY;
		R f = sF;
		if (f != R(1)) {
			for (uint j = tid; j <= k; j += WG) {
				y[base + j * N + k] *= f;
			}
			yi *= f;
			memoryBarrierBuffer();
			barrier();
		}
		for (uint j = tid; j < i; j += WG) {
			y[base + j * N + k] -= laMul(h[base + j * N + i], yi);
		}
		memoryBarrierBuffer();
		barrier();
	}
}
`)
	return b.String()
}

// eigBackGLSL: V = D·Z·Y (Y upper triangular). Bindings: Z, Y, D, V.
// Push: total, N.
func eigBackGLSL(wk *eigWork) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, wk.acc, wk.cdt)
	b.WriteString(eigDefs(wk))
	b.WriteString(`layout(std430, binding = 0) readonly buffer B0 { C z[]; };
layout(std430, binding = 1) readonly buffer B1 { C y[]; };
layout(std430, binding = 2) readonly buffer B2 { R dd[]; };
layout(std430, binding = 3) writeonly buffer B3 { C v[]; };
layout(push_constant) uniform P { uint total; uint N; } p;
void main() {
	uint e = gid();
	if (e >= p.total) return;
	uint N = p.N, mat = N * N, b = e / mat, i = (e % mat) / N, k = e % N, base = b * mat;
	C s = C(0);
	for (uint j = 0u; j <= k; j++) {
		s += laMul(z[base + i * N + j], y[base + j * N + k]);
	}
	v[e] = s * dd[b * N + i];
}
`)
	return b.String()
}

// eigNormGLSL scales each column of V to unit 2-norm with its largest
// component real (the first of equal ones), or NaN where the matrix
// failed. Bindings: V, st. Push: total (B·N), N.
func eigNormGLSL(wk *eigWork) string {
	var b strings.Builder
	eigGroupHead(&b, wk)
	fmt.Fprintf(&b, `layout(std430, binding = 0) coherent buffer B0 { C v[]; };
layout(std430, binding = 1) readonly buffer B1 { uint st[]; };
layout(push_constant) uniform P { uint total; uint N; } p;
shared R sn[WG];
shared R sm[WG];
shared uint si[WG];
%[3]svoid main() {
	uint g = wgid();
	if (g >= p.total) return;
	uint tid = gl_LocalInvocationIndex;
	uint N = p.N, b = g / N, k = g %% N, base = b * N * N;
	bool bad = failed(b);
	R n2 = R(0), m = R(-1);
	uint mi = 0u;
	for (uint i = tid; i < N; i += WG) {
		C x = v[base + i * N + k];
		R a = dot(x, x);
		n2 += a;
		if (a > m) { m = a; mi = i; }
	}
	sn[tid] = n2;
	sm[tid] = m;
	si[tid] = mi;
%[1]s	R nrm = sqrt(sn[0]);
	C x = v[base + si[0] * N + k];
	C ph = laConj(x) / (sqrt(sm[0]) * nrm);
	barrier();
	for (uint i = tid; i < N; i += WG) {
		C r = bad ? C(%[2]s) : laMul(v[base + i * N + k], ph);
		if (i == si[0] && !bad) r.y = R(0);
		v[base + i * N + k] = r;
	}
}
`, treeGLSL(`sn[tid] += sn[tid + s];
		if (sm[tid + s] > sm[tid] || (sm[tid + s] == sm[tid] && si[tid + s] < si[tid])) { sm[tid] = sm[tid + s]; si[tid] = si[tid + s]; }`),
		nanGLSL(opcore.GLSLType(wk.acc)), eigFailedGLSL)
	return b.String()
}

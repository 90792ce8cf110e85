package linalg

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// GLSL of svd's and eigh's outputs (svd.go, eigh.go).

// linEyeGLSL: out = identity matrices n×n. Push: total, n.
func linEyeGLSL(dt tensor.Dtype) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, dt)
	fmt.Fprintf(&b, `layout(std430, binding = 0) writeonly buffer B0 { %[1]s y[]; };
layout(push_constant) uniform P { uint total; uint n; } p;
void main() {
	uint e = gid();
	if (e >= p.total) return;
	uint rem = e %% (p.n * p.n);
	y[e] = rem / p.n == rem %% p.n ? %[2]s : %[1]s(0);
}
`, opcore.GLSLType(dt), linEl{acc: dt.Real(), cx: dt.IsComplex()}.lit("1"))
	return b.String()
}

// svdValuesGLSL: out[b][r] = s[b][perm[b][r]] * scale[b] (eig: (s -
// shift[b]) * scale[b]). Bindings: s, perm, scale, [shift,] out. Push: B,
// N.
func svdValuesGLSL(acc, dt tensor.Dtype, eig bool) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, acc, dt)
	a := opcore.GLSLType(acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s s[]; };
layout(std430, binding = 1) readonly buffer B1 { uint perm[]; };
layout(std430, binding = 2) readonly buffer B2 { %[1]s scale[]; };
`, a)
	next := 3
	if eig {
		fmt.Fprintf(&b, "layout(std430, binding = 3) readonly buffer B3 { %s shift[]; };\n", a)
		next = 4
	}
	fmt.Fprintf(&b, `layout(std430, binding = %[3]d) writeonly buffer BO { %[2]s y[]; };
layout(push_constant) uniform P { uint B; uint N; } p;
void main() {
	uint e = gid();
	if (e >= p.B * p.N) return;
	uint b = e / p.N;
	%[1]s v = s[b * p.N + perm[e]];
`, a, opcore.GLSLType(dt), next)
	if eig {
		b.WriteString("\tv -= shift[b];\n")
	}
	fmt.Fprintf(&b, "\ty[e] = %s(v * scale[b]);\n}\n", opcore.GLSLType(dt))
	return b.String()
}

// svdUGLSL: the work U's columns in rank order: w/σ where σ > thresh,
// else 0 and marked for completion (as the columns past N). Bindings: W,
// s, perm, U, need. Push: B, M, N, Mc.
func svdUGLSL(el linEl, thresh float64) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, el.acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[3]s w[]; };
layout(std430, binding = 1) readonly buffer B1 { %[1]s s[]; };
layout(std430, binding = 2) readonly buffer B2 { uint perm[]; };
layout(std430, binding = 3) writeonly buffer B3 { %[3]s u[]; };
layout(std430, binding = 4) writeonly buffer B4 { uint need[]; };
layout(push_constant) uniform P { uint B; uint M; uint N; uint Mc; } p;
void main() {
	uint e = gid();
	uint mat = p.Mc * p.M;
	if (e >= p.B * mat) return;
	uint b = e / mat, rem = e %% mat, r = rem / p.M, i = rem %% p.M;
	bool good = false;
	%[3]s v = %[3]s(0);
	if (r < p.N) {
		uint col = perm[b * p.N + r];
		%[1]s sv = s[b * p.N + col];
		good = sv > %[2]s;
		if (good) v = w[(b * p.N + col) * p.M + i] / sv;
	}
	u[e] = v;
	if (i == 0u) need[b * p.Mc + r] = good ? 0u : 1u;
}
`, el.r(), linLit(el.acc, thresh), el.t())
	return b.String()
}

// svdCompleteGLSL: columns c0..c1-1 of U that need it become unit vectors
// orthogonal to the others: a pseudo-random vector, Gram-Schmidt twice
// against every other column (those still to complete are zero), then
// normalized. A workgroup of lc per matrix. Bindings: U, need, coef.
// Push: B, M, Mc, c0, c1.
func svdCompleteGLSL(el linEl, lc int) string {
	var b strings.Builder
	linHead(&b, lc, el.acc)
	b.WriteString(el.helpers())
	fmt.Fprintf(&b, `layout(std430, binding = 0) buffer B0 { %[3]s u[]; };
layout(std430, binding = 1) readonly buffer B1 { uint need[]; };
layout(std430, binding = 2) buffer B2 { %[3]s coef[]; };
layout(push_constant) uniform P { uint B; uint M; uint Mc; uint c0; uint c1; } p;
const uint LC = %[2]du;
shared %[1]s red[LC];
uint mix32(uint h) {
	h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
	return h;
}
void main() {
	uint b = wgid();
	if (b >= p.B) return;
	uint lid = gl_LocalInvocationID.x;
	uint base = b * p.Mc * p.M, cb = b * p.Mc;
	for (uint r = p.c0; r < p.c1; r++) {
		if (need[cb + r] == 0u) continue;
		uint cr = base + r * p.M;
		for (uint i = lid; i < p.M; i += LC) {
			uint h = mix32(i * 0x9e3779b1u + (r + 1u) * 0x85ebca77u);
			u[cr + i] = %[3]s(float(h >> 8) * (1.0 / 16777216.0) - 0.5);
		}
		memoryBarrierBuffer();
		barrier();
		for (uint pass = 0u; pass < 2u; pass++) {
			for (uint k = lid; k < p.Mc; k += LC) {
				%[3]s d = %[3]s(0);
				if (k != r) {
					for (uint i = 0u; i < p.M; i++) d += %[4]s;
				}
				coef[cb + k] = d;
			}
			memoryBarrierBuffer();
			barrier();
			for (uint i = lid; i < p.M; i += LC) {
				%[3]s g = u[cr + i];
				for (uint k = 0u; k < p.Mc; k++) g -= %[5]s;
				u[cr + i] = g;
			}
			memoryBarrierBuffer();
			barrier();
		}
		%[1]s sum = %[1]s(0);
		for (uint i = lid; i < p.M; i += LC) sum += %[6]s;
		red[lid] = sum;
		barrier();
		for (uint h = LC / 2u; h > 0u; h >>= 1) {
			if (lid < h) red[lid] += red[lid + h];
			barrier();
		}
		%[1]s inv = %[1]s(1) / sqrt(red[0]);
		for (uint i = lid; i < p.M; i += LC) u[cr + i] *= inv;
		memoryBarrierBuffer();
		barrier();
	}
}
`, el.r(), lc, el.t(), el.cjmul("u[base + k * p.M + i]", "u[cr + i]"),
		el.mul("coef[cb + k]", "u[base + k * p.M + i]"), el.norm2("u[cr + i]"))
	return b.String()
}

// linPermGLSL: out[b] from vectors of src[b] (see linPerm). Bindings:
// src, [perm,] out. Push: B, n, k, cnt, N.
func linPermGLSL(sdt, dt tensor.Dtype, transposed, usePerm, conj bool) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, sdt, dt)
	fmt.Fprintf(&b, "layout(std430, binding = 0) readonly buffer B0 { %s src[]; };\n", opcore.GLSLType(sdt))
	o := 1
	if usePerm {
		b.WriteString("layout(std430, binding = 1) readonly buffer B1 { uint perm[]; };\n")
		o = 2
	}
	fmt.Fprintf(&b, `layout(std430, binding = %[2]d) writeonly buffer BO { %[1]s y[]; };
layout(push_constant) uniform P { uint B; uint n; uint k; uint cnt; uint N; } p;
void main() {
	uint e = gid();
	uint mat = p.k * p.n;
	if (e >= p.B * mat) return;
	uint b = e / mat, rem = e %% mat;
`, opcore.GLSLType(dt), o)
	if transposed {
		b.WriteString("\tuint i = rem / p.k, r = rem % p.k;\n")
	} else {
		b.WriteString("\tuint r = rem / p.n, i = rem % p.n;\n")
	}
	if usePerm {
		b.WriteString("\tuint col = perm[b * p.N + r];\n")
	} else {
		b.WriteString("\tuint col = r;\n")
	}
	fmt.Fprintf(&b, "\t%s v = src[(b * p.cnt + col) * p.n + i];\n", opcore.GLSLType(sdt))
	if conj {
		b.WriteString("\tv.y = -v.y;\n")
	}
	fmt.Fprintf(&b, "\ty[e] = %s(v);\n}\n", opcore.GLSLType(dt))
	return b.String()
}

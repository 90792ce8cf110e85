package linalg

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// GLSL of the norms (norm.go).

// normGatherGLSL: t[e] = |x| (hypot-style for complex x) or x != 0 of element e of the rows, x read
// through dims and strides (rank of them). Push: n, dims, strides.
func normGatherGLSL(dt, acc tensor.Dtype, rank int, nonzero bool) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, dt, acc)
	if dt.IsComplex() {
		b.WriteString(opcore.ComplexGLSL(dt))
	}
	a := opcore.GLSLType(acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s x[]; };
layout(std430, binding = 1) writeonly buffer B1 { %[2]s t[]; };
layout(push_constant) uniform P { uint n; uint dims[%[3]d]; uint st[%[3]d]; } p;
void main() {
	uint e = gid();
	if (e >= p.n) return;
	uint r = e, src = 0u, d;
`, opcore.GLSLType(dt), a, rank)
	for d := rank - 1; d >= 0; d-- {
		fmt.Fprintf(&b, "\td = r %% p.dims[%d]; r /= p.dims[%d]; src += d * p.st[%d];\n", d, d, d)
	}
	switch {
	case nonzero && dt.IsComplex():
		fmt.Fprintf(&b, "\t%[2]s v = x[src];\n\tt[e] = v != %[2]s(0) ? %[1]s(1) : %[1]s(0);\n}\n", a, opcore.GLSLType(dt))
	case nonzero:
		fmt.Fprintf(&b, "\t%[1]s v = %[1]s(x[src]);\n\tt[e] = v != %[1]s(0) ? %[1]s(1) : %[1]s(0);\n}\n", a)
	case dt.IsComplex():
		fmt.Fprintf(&b, "\tt[e] = %s;\n}\n", opcore.Cfn("cabs", dt, "x[src]"))
	default:
		fmt.Fprintf(&b, "\tt[e] = abs(%s(x[src]));\n}\n", a)
	}
	return b.String()
}

// normPowFn returns the GLSL of pow(x, y) in acc's type and the code it
// needs.
func normPowFn(op *opcore.Op, acc tensor.Dtype) (string, string) {
	if acc == tensor.Float64 {
		return "powD", opcore.PowF64
	}
	if op.Device().Features.ShaderFloat64 {
		return "powC", opcore.PowF32
	}
	return "powC", opcore.PowF32Lite
}

// normPowGLSL: t = (t / sc[row])^ord, in place. Bindings: t, sc. Push: n,
// row length.
func normPowGLSL(op *opcore.Op, acc tensor.Dtype, ord float64) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, acc)
	a := opcore.GLSLType(acc)
	pow, code := normPowFn(op, acc)
	b.WriteString(code)
	expr := fmt.Sprintf("%s(v, %s)", pow, linLit(acc, ord))
	if ord == 2 {
		expr = "v * v"
	}
	fmt.Fprintf(&b, `layout(std430, binding = 0) buffer B0 { %[1]s t[]; };
layout(std430, binding = 1) readonly buffer B1 { %[1]s sc[]; };
layout(push_constant) uniform P { uint n; uint len; } p;
void main() {
	uint e = gid();
	if (e >= p.n) return;
	%[1]s v = t[e] / sc[e / p.len];
	t[e] = %[2]s;
}
`, a, expr)
	return b.String()
}

// normRootGLSL: y = sc * sum^(1/ord); 0 where sc is 0, inf where sc is.
// Bindings: sc, sum, y. Push: m.
func normRootGLSL(op *opcore.Op, acc, dt tensor.Dtype, ord float64) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, acc, dt)
	a := opcore.GLSLType(acc)
	pow, code := normPowFn(op, acc)
	b.WriteString(code)
	root := fmt.Sprintf("%s(s, %s)", pow, linLit(acc, 1/ord))
	if ord == 2 {
		root = "sqrt(s)"
	}
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s sc[]; };
layout(std430, binding = 1) readonly buffer B1 { %[1]s sum[]; };
layout(std430, binding = 2) writeonly buffer B2 { %[2]s y[]; };
layout(push_constant) uniform P { uint m; } p;
void main() {
	uint o = gid();
	if (o >= p.m) return;
	%[1]s c = sc[o], s = sum[o];
	%[1]s v = c * %[3]s;
	if (c == %[1]s(0)) v = %[1]s(0);
	if (isinf(c)) v = c;
	if (isnan(c)) v = c;
	y[o] = %[2]s(v);
}
`, a, opcore.GLSLType(dt), root)
	return b.String()
}

// normSingularGLSL: y[b] = the largest ("2") or smallest ("-2") singular
// value, or their sum ("nuc"). Bindings: s, perm, scale, y. Push: B, N.
func normSingularGLSL(acc, dt tensor.Dtype, ord string) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, acc, dt)
	a := opcore.GLSLType(acc)
	var expr string
	switch ord {
	case "2":
		expr = "s[base + perm[base]]"
	case "-2":
		expr = "s[base + perm[base + p.N - 1u]]"
	default:
		expr = "v"
	}
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s s[]; };
layout(std430, binding = 1) readonly buffer B1 { uint perm[]; };
layout(std430, binding = 2) readonly buffer B2 { %[1]s scale[]; };
layout(std430, binding = 3) writeonly buffer B3 { %[2]s y[]; };
layout(push_constant) uniform P { uint B; uint N; } p;
void main() {
	uint b = gid();
	if (b >= p.B) return;
	uint base = b * p.N;
	%[1]s v = %[1]s(0);
`, a, opcore.GLSLType(dt))
	if ord == "nuc" {
		b.WriteString("\tfor (uint j = 0u; j < p.N; j++) v += s[base + perm[base + j]];\n")
	}
	fmt.Fprintf(&b, "\ty[b] = %s((%s) * scale[b]);\n}\n", opcore.GLSLType(dt), expr)
	return b.String()
}

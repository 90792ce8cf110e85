package ops

import (
	"fmt"
	"math"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// GLSL for one reduction pass. A pass reduces each output's segment of n
// elements by a fixed factor: the segment is cut into chunks of
// itemsPerLane << lg elements, each reduced by 1 << lg lanes (invocations)
// that load itemsPerLane elements each and then combine their values in a
// tree (shared memory, or subgroup arithmetic when the lanes are the whole
// workgroup). Chunk c of output o is "pair" p = o*g + c, where g is the
// chunk count per output; the pass writes one value per pair, so the next
// pass reduces segments of g elements. No loop's trip count depends on the
// input: every invocation loads at most itemsPerLane elements and the tree
// has at most log2(reduceLocal) steps.

// reduceLocal is the workgroup size of the reduction passes, and the most
// lanes one chunk uses.
const reduceLocal = 256

// itemsPerLane is how many elements each lane loads: a workgroup reduces
// up to 2048 elements.
const itemsPerLane = 8

// reduceKind is what a reduction computes.
type reduceKind int

const (
	kindSum reduceKind = iota
	kindProd
	kindMax
	kindMin
	kindArgmax
)

// passSpec says which kernel a pass runs. Bindings: the input (for argmax
// after the first pass: values, then indices), then the output (argmax
// before the last pass: values, then indices), then, for expOf, the
// per-output values subtracted before exp.
type passSpec struct {
	kind     reduceKind
	in       tensor.Dtype // dtype read
	acc      tensor.Dtype // accumulator dtype: what partials hold
	out      tensor.Dtype // dtype written by the last pass
	first    bool         // reads the op's input (argmax: the index is the position)
	strided  bool         // the input is read through dims/strides (first pass only)
	last     bool         // writes the op's output
	mean     bool         // the last pass divides by total
	subgroup bool         // the lanes are the workgroup and reduce with subgroup arithmetic
	expOf    bool         // the first pass loads exp(x - m[o]) (softmax)
}

// pushValues returns the push constants of a pass, in the order of the
// block reduceSource declares.
func (s passSpec) pushValues(n, pairs, g, lg, total uint32, dims, strides []int, nk int) []any {
	v := []any{n, pairs, g, lg, total}
	if s.strided {
		var d, st [maxRank]uint32
		for i := range dims {
			d[i], st[i] = uint32(dims[i]), uint32(strides[i])
		}
		v = append(v, uint32(nk), uint32(len(dims)), d, st)
	}
	return v
}

// accLiterals returns GLSL expressions for the identity of kind over the
// accumulator type acc.
func identity(kind reduceKind, acc tensor.Dtype) string {
	t := glslType(acc)
	switch kind {
	case kindSum:
		return t + "(0)"
	case kindProd:
		return t + "(1)"
	case kindMax, kindArgmax:
		switch acc {
		case tensor.Float32:
			return "uintBitsToFloat(0xff800000u)"
		case tensor.Float64:
			return "packDouble2x32(uvec2(0u, 0xfff00000u))"
		case tensor.Int32:
			return "int(0x80000000u)"
		case tensor.Int64:
			return "int64_t(0x8000000000000000ul)"
		case tensor.Uint64:
			return "0ul"
		}
		return "0u"
	case kindMin:
		switch acc {
		case tensor.Float32:
			return "uintBitsToFloat(0x7f800000u)"
		case tensor.Float64:
			return "packDouble2x32(uvec2(0u, 0x7ff00000u))"
		case tensor.Int32:
			return "0x7fffffff"
		case tensor.Int64:
			return "int64_t(0x7ffffffffffffffful)"
		case tensor.Uint64:
			return "0xfffffffffffffffful"
		}
		return "0xffffffffu"
	}
	return "invalid"
}

// nanLiteral returns a quiet NaN of acc.
func nanLiteral(acc tensor.Dtype) string {
	if acc == tensor.Float64 {
		return "packDouble2x32(uvec2(0u, 0x7ff80000u))"
	}
	return "uintBitsToFloat(0x7fc00000u)"
}

// combineGLSL defines ACC comb(ACC a, ACC b) for kind, and for the
// subgroup variant ACC sgop(ACC v) over the whole subgroup. Max and min
// propagate NaN, as NumPy's do.
func combineGLSL(kind reduceKind, acc tensor.Dtype, subgroup bool) string {
	fl := isFloat(acc)
	var comb, sg string
	switch kind {
	case kindSum:
		comb, sg = "a + b", "subgroupAdd(v)"
	case kindProd:
		comb, sg = "a * b", "subgroupMul(v)"
	case kindMax, kindMin:
		fn, cmp := "max", ">"
		if kind == kindMin {
			fn, cmp = "min", "<"
		}
		if fl {
			comb = fmt.Sprintf("(a %s b || isnan(a)) ? a : b", cmp)
			// Subgroup min/max leave NaN undefined: reduce without NaNs
			// and put one back where any lane had one.
			sg = fmt.Sprintf("subgroupOr(isnan(v) ? 1u : 0u) != 0u ? %s : subgroup%s(isnan(v) ? %s : v)",
				nanLiteral(acc), strings.ToUpper(fn[:1])+fn[1:], identity(kind, acc))
		} else {
			comb = fn + "(a, b)"
			sg = "subgroup" + strings.ToUpper(fn[:1]) + fn[1:] + "(v)"
		}
	}
	t := glslType(acc)
	src := fmt.Sprintf("%[1]s comb(%[1]s a, %[1]s b) { return %[2]s; }\n", t, comb)
	if subgroup {
		src += fmt.Sprintf("%[1]s sgop(%[1]s v) { return %[2]s; }\n", t, sg)
	}
	return src
}

// betterGLSL defines bool better(ACC a, uint ia, ACC b, uint ib): whether
// (a, ia) wins argmax over (b, ib): the larger value, NaN above all, the
// lower index among equals (NumPy's first occurrence).
func betterGLSL(acc tensor.Dtype) string {
	t := glslType(acc)
	if isFloat(acc) {
		return fmt.Sprintf(`bool better(%[1]s a, uint ia, %[1]s b, uint ib) {
	if (isnan(a)) return !isnan(b) || ia < ib;
	if (isnan(b)) return false;
	return a > b || (a == b && ia < ib);
}
`, t)
	}
	return fmt.Sprintf("bool better(%[1]s a, uint ia, %[1]s b, uint ib) { return a > b || (a == b && ia < ib); }\n", t)
}

// dexpGLSL defines double dexp(double x): GLSL has no double exp. Range
// reduction x = k ln2 + r, |r| <= ln2/2 (ln2 split in a high part whose
// products with k are exact and a low part), a degree-13 Taylor
// polynomial (truncation below 1e-17 relative), then ldexp.
func dexpGLSL() string {
	var b strings.Builder
	b.WriteString(`double dexp(double x) {
	if (isnan(x)) return x;
	if (x > 709.782712893384LF) return packDouble2x32(uvec2(0u, 0x7ff00000u));
	if (x < -745.2LF) return 0.0LF;
	double k = floor(x * 1.4426950408889634LF + 0.5LF);
	double r = (x - k * 6.93147180369123816490e-01LF) - k * 1.90821492927058770002e-10LF;
`)
	fact := 1.0
	coef := make([]float64, 14)
	for i := range coef {
		if i > 0 {
			fact *= float64(i)
		}
		coef[i] = 1 / fact
	}
	fmt.Fprintf(&b, "\tdouble p = %sLF;\n", fmtDouble(coef[13]))
	for i := 12; i >= 0; i-- {
		fmt.Fprintf(&b, "\tp = p * r + %sLF;\n", fmtDouble(coef[i]))
	}
	b.WriteString("\treturn ldexp(p, int(k));\n}\n")
	return b.String()
}

func fmtDouble(v float64) string {
	s := fmt.Sprintf("%.17g", v)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "0.0"
	}
	return s
}

// expFn returns the GLSL exp of acc.
func expFn(acc tensor.Dtype) string {
	if acc == tensor.Float64 {
		return "dexp"
	}
	return "exp"
}

// reduceSource returns the GLSL of one pass.
func reduceSource(s passSpec) string {
	var b strings.Builder
	dts := []tensor.Dtype{s.in, s.acc}
	if s.last {
		dts = append(dts, s.out)
	}
	if s.kind == kindArgmax {
		dts = append(dts, tensor.Int64)
	}
	b.WriteString(header(dts...))
	if s.subgroup {
		b.WriteString("#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_arithmetic : require\n")
	}
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", reduceLocal)
	acc, in := glslType(s.acc), glslType(s.in)
	bind := 0
	buf := func(access, typ, name string) {
		fmt.Fprintf(&b, "layout(binding = %d) %s buffer B%d { %s %s[]; };\n", bind, access, bind, typ, name)
		bind++
	}
	buf("readonly", in, "x")
	if s.kind == kindArgmax && !s.first {
		buf("readonly", "uint", "xi")
	}
	switch {
	case s.kind == kindArgmax && s.last:
		buf("writeonly", "int64_t", "yi")
	case s.kind == kindArgmax:
		buf("writeonly", acc, "y")
		buf("writeonly", "uint", "yi")
	case s.last:
		buf("writeonly", glslType(s.out), "y")
	default:
		buf("writeonly", acc, "y")
	}
	if s.expOf {
		buf("readonly", acc, "m")
	}
	b.WriteString("layout(push_constant) uniform P {\n\tuint n; uint pairs; uint g; uint lg; uint total;\n")
	if s.strided {
		fmt.Fprintf(&b, "\tuint nk; uint nd; uint dims[%d]; uint strides[%d];\n", maxRank, maxRank)
	}
	b.WriteString("};\n")
	b.WriteString(indexGLSL)
	if s.strided {
		// outBase: the offset of output o's first element (kept dims
		// 0..nk-1); raddr: the offset of element r of a segment (reduced
		// dims nk..nd-1), both mixed-radix, row-major.
		b.WriteString(`uint outBase(uint o) {
	uint a = 0u;
	for (uint d = nk; d > 0u; d--) { a += (o % dims[d - 1u]) * strides[d - 1u]; o /= dims[d - 1u]; }
	return a;
}
uint raddr(uint r) {
	uint a = 0u;
	for (uint d = nd; d > nk; d--) { a += (r % dims[d - 1u]) * strides[d - 1u]; r /= dims[d - 1u]; }
	return a;
}
`)
	} else {
		b.WriteString("uint outBase(uint o) { return o * n; }\nuint raddr(uint r) { return r; }\n")
	}
	if s.expOf {
		if s.acc == tensor.Float64 {
			b.WriteString(dexpGLSL())
		}
		fmt.Fprintf(&b, "%[1]s load(uint o, uint a) { return %[2]s(%[1]s(x[a]) - m[o]); }\n", acc, expFn(s.acc))
	} else {
		fmt.Fprintf(&b, "%[1]s load(uint o, uint a) { return %[1]s(x[a]); }\n", acc)
	}
	ident := identity(s.kind, s.acc)
	if s.kind == kindArgmax {
		b.WriteString(betterGLSL(s.acc))
		fmt.Fprintf(&b, "shared %s shv[%d];\nshared uint shi[%d];\n", acc, reduceLocal, reduceLocal)
	} else {
		b.WriteString(combineGLSL(s.kind, s.acc, s.subgroup))
		fmt.Fprintf(&b, "shared %s sh[%d];\n", acc, reduceLocal)
	}
	fmt.Fprintf(&b, `void main() {
	uint lid = gl_LocalInvocationID.x;
	uint f = gid();
	uint p = f >> lg;
	uint j = f & ((1u << lg) - 1u);
	%s acc = %s;
`, acc, ident)
	if s.kind == kindArgmax {
		b.WriteString("\tuint ai = 0xffffffffu;\n")
	}
	fmt.Fprintf(&b, `	if (p < pairs) {
		uint o = p / g;
		uint r0 = (p - o * g) * (%du << lg) + j;
		uint base = outBase(o);
		for (uint i = 0u; i < %du; i++) {
			uint r = r0 + (i << lg);
			if (r < n) {
`, itemsPerLane, itemsPerLane)
	switch {
	case s.kind == kindArgmax && s.first:
		b.WriteString("\t\t\t\tuint a = base + raddr(r);\n\t\t\t\t" + acc + " v = load(o, a);\n\t\t\t\tif (better(v, r, acc, ai)) { acc = v; ai = r; }\n")
	case s.kind == kindArgmax:
		b.WriteString("\t\t\t\tuint a = base + raddr(r);\n\t\t\t\t" + acc + " v = load(o, a);\n\t\t\t\tif (better(v, xi[a], acc, ai)) { acc = v; ai = xi[a]; }\n")
	default:
		b.WriteString("\t\t\t\tacc = comb(acc, load(o, base + raddr(r)));\n")
	}
	b.WriteString("\t\t\t}\n\t\t}\n\t}\n")

	fin := "acc"
	if s.last && s.mean {
		fin = fmt.Sprintf("acc / %s(total)", acc)
	}
	if s.last {
		fin = fmt.Sprintf("%s(%s)", glslType(s.out), fin)
	}
	switch {
	case s.kind == kindArgmax:
		b.WriteString(`	shv[lid] = acc;
	shi[lid] = ai;
	barrier();
	for (uint s = (1u << lg) >> 1; s > 0u; s >>= 1) {
		if (j < s && better(shv[lid + s], shi[lid + s], shv[lid], shi[lid])) {
			shv[lid] = shv[lid + s];
			shi[lid] = shi[lid + s];
		}
		barrier();
	}
	if (j == 0u && p < pairs) {
`)
		if s.last {
			b.WriteString("\t\tyi[p] = int64_t(shi[lid]);\n")
		} else {
			b.WriteString("\t\ty[p] = shv[lid];\n\t\tyi[p] = shi[lid];\n")
		}
		b.WriteString("\t}\n")
	case s.subgroup:
		// The workgroup is one chunk (lg == 8): each subgroup reduces its
		// lanes, subgroup 0 then reduces the subgroups' results (a loop of
		// at most reduceLocal/subgroupSize^2 steps, fixed by the device).
		fmt.Fprintf(&b, `	acc = sgop(acc);
	if (subgroupElect()) sh[gl_SubgroupID] = acc;
	barrier();
	if (gl_SubgroupID == 0u) {
		acc = %s;
		for (uint k = gl_SubgroupInvocationID; k < gl_NumSubgroups; k += gl_SubgroupSize) acc = comb(acc, sh[k]);
		acc = sgop(acc);
		if (subgroupElect() && p < pairs) y[p] = %s;
	}
`, ident, fin)
	default:
		fmt.Fprintf(&b, `	sh[lid] = acc;
	barrier();
	for (uint s = (1u << lg) >> 1; s > 0u; s >>= 1) {
		if (j < s) sh[lid] = comb(sh[lid], sh[lid + s]);
		barrier();
	}
	acc = sh[lid];
	if (j == 0u && p < pairs) y[p] = %s;
`, fin)
	}
	b.WriteString("}\n")
	return b.String()
}

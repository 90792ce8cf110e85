package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/tensor"
)

// GLSL for one reduction pass. A pass reduces each output's segment of n
// elements by a fixed factor: the segment is cut into chunks of it << lg
// elements, each reduced by 1 << lg lanes (invocations) that load it
// elements each (it <= itemsPerLane, a multiple of 4) and then combine
// their values in a
// tree (shared memory, or subgroup arithmetic when the lanes are the whole
// workgroup). Chunk c of output o is "pair" p = o*g + c, where g is the
// chunk count per output; the pass writes one value per pair, so the next
// pass reduces segments of g elements. No loop's trip count depends on the
// input: every invocation loads at most itemsPerLane elements and the tree
// has at most log2(reduceLocal) steps.

// reduceLocal is the workgroup size of the reduction passes, and the most
// lanes one chunk uses.
const reduceLocal = 256

// itemsPerLane is how many elements each lane loads (in four running
// values): a workgroup reduces up to 16384 elements. Fewer would leave
// lavapipe's time in the per-workgroup tree: 8 ran at a third of a copy
// kernel's bandwidth, 64 at about its bandwidth.
const itemsPerLane = 64

// ReduceKind is what a reduction computes.
type ReduceKind int

const (
	KindSum ReduceKind = iota
	kindProd
	KindMax
	KindMin
	kindArgmax
)

// PassSpec says what a pass computes. The GLSL source depends only on
// the dtypes, on argmax's first and last passes (their bindings differ),
// on expOf and on whether the device has subgroup arithmetic; the kind,
// the layout, the mean's division and the subgroup tree are
// specialization constants (specs), so passes that differ only in them
// share one compiled module.
//
// Bindings: the input (argmax after the first pass: values, then
// indices), then the output (argmax before the last pass: values, then
// indices), then, for expOf, the per-output values subtracted before exp.
type PassSpec struct {
	Kind     ReduceKind
	In       tensor.Dtype // dtype read
	Acc      tensor.Dtype // accumulator dtype: what partials hold
	Out      tensor.Dtype // dtype the last pass writes
	first    bool         // reads the op's input (argmax: the index is the position)
	strided  bool         // the input is read through dims/strides (first pass only)
	last     bool         // writes the op's output
	mean     bool         // the last pass divides by total
	subgroup bool         // the lanes are the workgroup and reduce with subgroup arithmetic
	vec4     bool         // lanes load 4-vectors (contiguous input)
	columns  bool         // strided, one lane per pair, pairs chunk-major
	sgAble   bool         // the device has subgroup arithmetic (the source may use it)
	expOf    bool         // the first pass loads exp(x - m[o]) (softmax)
	truth    bool         // the first pass loads x != 0 as 0 or 1 (all, any)
}

// Specialization constant IDs of the pass kernels.
const (
	specKind     = iota // uint: reduceKind (not argmax)
	specStrided         // bool: read through dims/strides
	specMean            // bool: divide by total (not argmax)
	specSubgroup        // bool: the subgroup tree (only in sources with sgAble)
	specVec4            // bool: load 4 elements at a time (only in sources with vec4 views)
	specColumns         // bool: pairs chunk-major, one lane each (strided reads of neighbouring outputs)
)

// storageVec4 returns the 4-vector of dt's storage type, or "" where the
// passes do not load vectors (64-bit types, whose vectors need 32-byte
// alignment).
func storageVec4(dt tensor.Dtype) string {
	switch dt {
	case tensor.Float16:
		return "f16vec4"
	case tensor.Float32:
		return "vec4"
	case tensor.Int8:
		return "i8vec4"
	case tensor.Int16:
		return "i16vec4"
	case tensor.Int32:
		return "ivec4"
	case tensor.Uint8, tensor.Bool:
		return "u8vec4"
	case tensor.Uint16:
		return "u16vec4"
	case tensor.Uint32:
		return "uvec4"
	}
	return ""
}

// hasVec4 reports whether the pass's source has the vector view of its
// input (the VEC4 constant).
func (s PassSpec) hasVec4() bool {
	return s.Kind != kindArgmax && !s.expOf && !(s.truth && s.first) && storageVec4(s.In) != ""
}

// written is the dtype a pass writes (argmax: its indices).
func (s PassSpec) written() tensor.Dtype {
	switch {
	case s.Kind == kindArgmax && s.last:
		return tensor.Int64
	case s.last:
		return s.Out
	}
	return s.Acc
}

// specs returns the pass's specialization constants.
func (s PassSpec) specs() []algorithm.Option {
	o := []algorithm.Option{algorithm.Spec(specStrided, s.strided), algorithm.Spec(specColumns, s.columns)}
	if s.Kind != kindArgmax {
		o = append(o, algorithm.Spec(specKind, uint32(s.Kind)))
		if s.written() != tensor.Bool { // a bool result has no MEAN (see fin)
			o = append(o, algorithm.Spec(specMean, s.last && s.mean))
		}
		if s.sgAble {
			o = append(o, algorithm.Spec(specSubgroup, s.subgroup))
		}
		if s.hasVec4() {
			o = append(o, algorithm.Spec(specVec4, s.vec4))
		}
	}
	return o
}

// pushValues returns the push constants of a pass, in the order of the
// block reduceSource declares.
func (s PassSpec) pushValues(n, pairs, g, lg, total, items uint32, dims, strides []int, nk int) []any {
	var d, st [MaxRank]uint32
	if s.strided {
		for i := range dims {
			d[i], st[i] = uint32(dims[i]), uint32(strides[i])
		}
	} else {
		nk, dims = 0, nil
	}
	return []any{n, pairs, g, lg, total, items, uint32(nk), uint32(len(dims)), d, st}
}

// reduceSource returns the GLSL of one pass.
func reduceSource(s PassSpec) string {
	var b strings.Builder
	argmax := s.Kind == kindArgmax
	wr := s.written()
	b.WriteString(Header(s.In, s.Acc, wr))
	sub := s.sgAble && !argmax
	if sub {
		b.WriteString("#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_arithmetic : require\n")
	}
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", reduceLocal)
	fmt.Fprintf(&b, "layout(constant_id = %d) const bool STRIDED = false;\n", specStrided)
	fmt.Fprintf(&b, "layout(constant_id = %d) const bool COLUMNS = false;\n", specColumns)
	if !argmax {
		fmt.Fprintf(&b, "layout(constant_id = %d) const uint KIND = 0u;\n", specKind)
		fmt.Fprintf(&b, "layout(constant_id = %d) const bool MEAN = false;\n", specMean)
	}
	if sub {
		fmt.Fprintf(&b, "layout(constant_id = %d) const bool SUBGROUP = false;\n", specSubgroup)
	}
	acc, in := GLSLType(s.Acc), GLSLType(s.In)
	bind := 0
	buf := func(access, typ, name string) {
		fmt.Fprintf(&b, "layout(binding = %d) %s buffer B%d { %s %s[]; };\n", bind, access, bind, typ, name)
		bind++
	}
	buf("readonly", in, "x")
	vec := s.hasVec4()
	if vec {
		// The same buffer seen as vectors.
		fmt.Fprintf(&b, "layout(binding = 0) readonly buffer B0v { %s x4[]; };\n", storageVec4(s.In))
		fmt.Fprintf(&b, "layout(constant_id = %d) const bool VEC4 = false;\n", specVec4)
	}
	if argmax && !s.first {
		buf("readonly", "uint", "xi")
	}
	switch {
	case argmax && s.last:
		buf("writeonly", "int64_t", "yi")
	case argmax:
		buf("writeonly", acc, "y")
		buf("writeonly", "uint", "yi")
	default:
		buf("writeonly", GLSLType(wr), "y")
	}
	if s.expOf {
		buf("readonly", acc, "m")
	}
	fmt.Fprintf(&b, "layout(push_constant) uniform P {\n\tuint n; uint pairs; uint g; uint lg; uint total; uint it;\n\tuint nk; uint nd; uint dims[%d]; uint strides[%d];\n};\n", MaxRank, MaxRank)
	b.WriteString(IndexGLSL)
	// outBase: the offset of output o's first element; raddr: the offset
	// of element r of its segment. Strided: mixed-radix over the kept dims
	// 0..nk-1 and the reduced dims nk..nd-1, row-major.
	// The outermost dimension of each needs no modulo: o < m and r < n.
	b.WriteString(`uint outBase(uint o) {
	if (!STRIDED) return o * n;
	if (nk == 0u) return 0u;
	uint a = 0u;
	for (uint d = nk - 1u; d > 0u; d--) { a += (o % dims[d]) * strides[d]; o /= dims[d]; }
	return a + o * strides[0];
}
uint raddr(uint r) {
	if (!STRIDED) return r;
	if (nd == nk) return 0u;
	uint a = 0u;
	for (uint d = nd - 1u; d > nk; d--) { a += (r % dims[d]) * strides[d]; r /= dims[d]; }
	return a + r * strides[nk];
}
`)
	if s.expOf {
		if s.Acc == tensor.Float64 {
			b.WriteString(dexpGLSL())
		}
		fmt.Fprintf(&b, "%[1]s load(uint o, uint a) { return %[2]s(%[1]s(x[a]) - m[o]); }\n", acc, expFn(s.Acc))
	} else if s.truth && s.first {
		// NaN is true: it compares unequal to 0.
		fmt.Fprintf(&b, "%[1]s load(uint o, uint a) { return (%[2]s(x[a]) == %[2]s(0)) ? %[1]s(0) : %[1]s(1); }\n", acc, ComputeType(s.In))
	} else {
		fmt.Fprintf(&b, "%[1]s load(uint o, uint a) { return %[1]s(x[a]); }\n", acc)
	}
	if argmax {
		b.WriteString(betterGLSL(s.Acc))
		fmt.Fprintf(&b, "%s ident() { return %s; }\n", acc, identity(kindArgmax, s.Acc))
		fmt.Fprintf(&b, "shared %s shv[%d];\nshared uint shi[%d];\n", acc, reduceLocal, reduceLocal)
	} else {
		b.WriteString(combineGLSL(s.Acc, sub))
		fmt.Fprintf(&b, "shared %s sh[%d];\n", acc, reduceLocal)
		if wr == tensor.Bool {
			// Any nonzero value is true (all's empty minimum too).
			fmt.Fprintf(&b, "uint8_t fin(%s v) { return uint8_t(v != %s(0) ? 1u : 0u); }\n", acc, acc)
		} else {
			fmt.Fprintf(&b, "%[1]s fin(%[2]s v) { return %[1]s(MEAN ? v / %[2]s(total) : v); }\n", GLSLType(wr), acc)
		}
	}
	fmt.Fprintf(&b, `void main() {
	uint lid = gl_LocalInvocationID.x;
	uint f = gid();
	uint p = f >> lg;
	uint j = f & ((1u << lg) - 1u);
	// Pair p is chunk c of output o, and its partial goes to q (outputs
	// major). COLUMNS orders pairs chunk-major, so neighbouring lanes
	// take neighbouring outputs.
	uint outs = pairs / g;
	uint o = COLUMNS ? p %% outs : p / g;
	uint c = COLUMNS ? p / outs : p - o * g;
	uint q = o * g + c;
	%s acc = ident();
`, acc)
	if argmax {
		b.WriteString("\tuint ai = 0xffffffffu;\n")
	} else {
		// Four running values per lane, combined at the end: a quarter of
		// the sequential depth (rounding error) and independent chains.
		fmt.Fprintf(&b, "\t%s a0 = acc, a1 = acc, a2 = acc, a3 = acc;\n", acc)
		if vec {
			// Sums of whole vectors go to a vector of running values:
			// one vector add instead of four scalar combines (the loads
			// per element decide the speed on CPU drivers).
			fmt.Fprintf(&b, "\t%[1]s a4 = %[1]s(0), a5 = %[1]s(0);\n", accVec4(s.Acc))
		}
	}
	b.WriteString("\tif (p < pairs) {\n")
	if vec {
		// Lane j loads vectors j, j + lanes, ... from the 4-aligned one
		// holding the chunk's first element, and takes the components that
		// are in the chunk: the chunk's elements, 4 at a time (one more
		// vector when the chunk does not start at a multiple of 4). A
		// vector past the buffer's end (m*n elements) is loaded element by
		// element.
		fmt.Fprintf(&b, `		if (VEC4 && KIND == %[5]du) {
			// Sums: the chunk's whole vectors in a tight loop, one vector
			// add each, and lane 0 adds the at most 3 + 3 elements before
			// the first and after the last (the branches per element, not
			// the loads, decide the speed on CPU drivers).
			uint s0 = o * n + c * (it << lg);
			uint e0 = min(s0 + (it << lg), o * n + n);
			uint vs = (s0 + 3u) >> 2, ve = max(e0 >> 2, vs);
			uint v = vs + j;
			for (uint i = 0u; i < %[1]du; i += 2u) {
				uint w = v + (1u << lg);
				if (w >= ve) break;
				a4 += %[4]s(x4[v]);
				a5 += %[4]s(x4[w]);
				v = w + (1u << lg);
			}
			if (v < ve) a4 += %[4]s(x4[v]);
			if (j == 0u) {
				for (uint e = s0; e < min(vs << 2, e0); e++) a0 = comb(a0, load(o, e));
				for (uint e = max(ve << 2, s0); e < e0; e++) a1 = comb(a1, load(o, e));
			}
		} else if (VEC4) {
			uint s0 = o * n + c * (it << lg);
			uint e0 = min(s0 + (it << lg), o * n + n);
			uint len = (pairs / g) * n;
			uint v0 = (s0 >> 2) + j;
			for (uint i = 0u; i <= %[1]du; i++) {
				if (i > it / 4u) break;
				uint e = (v0 + (i << lg)) * 4u;
				if (e < e0) {
					if (e + 3u < len) {
						%[2]s v = x4[e >> 2];
						if (e >= s0) a0 = comb(a0, %[3]s(v.x));
						if (e + 1u >= s0 && e + 1u < e0) a1 = comb(a1, %[3]s(v.y));
						if (e + 2u >= s0 && e + 2u < e0) a2 = comb(a2, %[3]s(v.z));
						if (e + 3u < e0) a3 = comb(a3, %[3]s(v.w));
					} else {
						if (e >= s0) a0 = comb(a0, load(o, e));
						if (e + 1u >= s0 && e + 1u < e0) a1 = comb(a1, load(o, e + 1u));
						if (e + 2u >= s0 && e + 2u < e0) a2 = comb(a2, load(o, e + 2u));
					}
				}
			}
		} else {
`, itemsPerLane/4, storageVec4(s.In), acc, accVec4(s.Acc), KindSum)
	} else {
		b.WriteString("\t\t{\n")
	}
	b.WriteString("\t\tuint r0 = c * (it << lg) + j;\n\t\tuint base = outBase(o);\n")
	if argmax {
		fmt.Fprintf(&b, `		for (uint i = 0u; i < %du; i++) {
			if (i >= it) break;
			uint r = r0 + (i << lg);
			if (r < n) {
`, itemsPerLane)
		if s.first {
			b.WriteString("\t\t\t\t" + acc + " v = load(o, base + raddr(r));\n\t\t\t\tif (better(v, r, acc, ai)) { acc = v; ai = r; }\n")
		} else {
			b.WriteString("\t\t\t\tuint a = base + raddr(r);\n\t\t\t\t" + acc + " v = load(o, a);\n\t\t\t\tif (better(v, xi[a], acc, ai)) { acc = v; ai = xi[a]; }\n")
		}
		b.WriteString("\t\t\t}\n\t\t}\n\t\t}\n\t}\n")
	} else {
		// Element i of the lane goes to running value i % 4.
		fmt.Fprintf(&b, "\t\tfor (uint i = 0u; i < %du; i += 4u) {\n\t\t\tif (i >= it) break;\n", itemsPerLane)
		for k := range 4 {
			fmt.Fprintf(&b, "\t\t\tuint q%[1]d = r0 + ((i + %[1]du) << lg);\n\t\t\tif (q%[1]d < n) a%[1]d = comb(a%[1]d, load(o, base + raddr(q%[1]d)));\n", k)
		}
		b.WriteString("\t\t}\n\t\t}\n\t}\n\tacc = comb(comb(a0, a1), comb(a2, a3));\n")
		if vec {
			fmt.Fprintf(&b, "\tif (KIND == %du) { a4 += a5; acc = comb(acc, (a4.x + a4.y) + (a4.z + a4.w)); }\n", KindSum)
		}
	}

	if argmax {
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
			b.WriteString("\t\tyi[q] = int64_t(shi[lid]);\n")
		} else {
			b.WriteString("\t\ty[q] = shv[lid];\n\t\tyi[q] = shi[lid];\n")
		}
		b.WriteString("\t}\n}\n")
		return b.String()
	}
	if sub {
		// The workgroup is one chunk (lg == 8): each subgroup reduces its
		// lanes, then subgroup 0 reduces the subgroups' results (a loop of
		// reduceLocal/subgroupSize^2 steps at most, fixed by the device).
		b.WriteString(`	if (SUBGROUP) {
		acc = sgop(acc);
		if (subgroupElect()) sh[gl_SubgroupID] = acc;
		barrier();
		if (gl_SubgroupID == 0u) {
			acc = ident();
			for (uint k = gl_SubgroupInvocationID; k < gl_NumSubgroups; k += gl_SubgroupSize) acc = comb(acc, sh[k]);
			acc = sgop(acc);
			if (subgroupElect() && p < pairs) y[q] = fin(acc);
		}
		return;
	}
`)
	}
	b.WriteString(`	sh[lid] = acc;
	barrier();
	for (uint s = (1u << lg) >> 1; s > 0u; s >>= 1) {
		if (j < s) sh[lid] = comb(sh[lid], sh[lid + s]);
		barrier();
	}
	if (j == 0u && p < pairs) y[q] = fin(sh[lid]);
}
`)
	return b.String()
}

// accVec4 returns the 4-vector of an accumulator dtype.
func accVec4(acc tensor.Dtype) string {
	switch GLSLType(acc) {
	case "double":
		return "dvec4"
	case "int":
		return "ivec4"
	case "uint":
		return "uvec4"
	case "int64_t":
		return "i64vec4"
	case "uint64_t":
		return "u64vec4"
	}
	return "vec4"
}

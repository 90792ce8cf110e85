package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// GLSL of the multi-pass scan (cumulative_sum, cumulative_prod and the
// compaction under nonzero). A row of n elements is cut into blocks of
// scanBlock; a workgroup scans one block: each of its scanLocal lanes
// scans scanItems consecutive elements in registers, the lanes' totals are
// scanned in shared memory (Blelloch's up-sweep and down-sweep: 2*log2
// steps, O(lanes) operations), and every element gets its lane's
// exclusive prefix. The block's total goes to a second buffer, [rows,
// blocks], which the next level scans the same way; the add-back passes
// then add block b-1's inclusive total to every element of block b, from
// the top level down. No loop's trip count depends on the data.

// scanLocal is the workgroup size of the block scan; scanItems the
// elements each lane scans; scanBlock the elements of one block.
const (
	scanLocal = 256
	scanItems = 8
	scanBlock = scanLocal * scanItems
)

// scanKind is the associative operation a scan applies.
type scanKind int

const (
	scanSum scanKind = iota
	scanProd
)

// scanSpec says what a block scan computes: its input dtype, the
// accumulator dtype (what the levels hold), the operation, and whether
// the first level loads x != 0 as 1 or 0 (compaction flags).
type scanSpec struct {
	kind  scanKind
	in    tensor.Dtype
	acc   tensor.Dtype
	out   tensor.Dtype // elements are converted to out, then to acc (0: straight to acc)
	flags bool
}

// scanIdent is the operation's identity in the accumulator's GLSL type.
func scanIdent(k scanKind, acc tensor.Dtype) string {
	if k == scanProd {
		return ComputeType(acc) + "(1)"
	}
	return ComputeType(acc) + "(0)"
}

// scanCombine returns GLSL combining a (earlier) and b (later).
func scanCombine(k scanKind, a, b string) string {
	if k == scanProd {
		return "(" + a + ") * (" + b + ")"
	}
	return "(" + a + ") + (" + b + ")"
}

// scanBlockSource is one level's block scan: x (the op's input through
// [outer, n, inner], or a lower level's totals with inner 1) to s ([rows,
// n], rows = outer*inner) and t ([rows, nb], the blocks' totals).
func scanBlockSource(sp scanSpec) string {
	var b strings.Builder
	b.WriteString(Header(sp.in, sp.acc))
	a := ComputeType(sp.acc)
	id := scanIdent(sp.kind, sp.acc)
	load := a + "(x[base + k * inner])"
	if sp.out != 0 && sp.out != sp.in && GLSLType(sp.out) != a {
		b.WriteString(Header(sp.out)[len("#version 450\n"):])
		load = fmt.Sprintf("%s(%s(x[base + k * inner]))", a, GLSLType(sp.out))
	}
	if sp.flags {
		load = fmt.Sprintf("(x[base + k * inner] != %s(0)) ? %s(1) : %s(0)", GLSLType(sp.in), a, a)
	}
	fmt.Fprintf(&b, `layout(local_size_x = %[1]d) in;
layout(binding = 0) readonly buffer B0 { %[2]s x[]; };
layout(binding = 1) writeonly buffer B1 { %[3]s s[]; };
layout(binding = 2) writeonly buffer B2 { %[3]s t[]; };
layout(push_constant) uniform P { uint n; uint inner; uint nb; uint blocks; };
shared %[3]s sh[%[1]d];
%[3]s load(uint base, uint k) {
	if (k >= n) return %[4]s;
	return %[5]s;
}
void main() {
	uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	if (g >= blocks) return;
	uint row = g / nb;
	uint blk = g %% nb;
	uint base = (row / inner) * n * inner + row %% inner;
	uint tid = gl_LocalInvocationID.x;
	uint k0 = blk * %[6]d + tid * %[7]d;
	%[3]s v[%[7]d];
	%[3]s run = %[4]s;
	for (uint j = 0; j < %[7]d; j++) {
		run = %[8]s;
		v[j] = run;
	}
	sh[tid] = run;
	barrier();
	for (uint d = 1; d < %[1]d; d <<= 1) {
		uint i = (tid + 1) * 2 * d - 1;
		if (i < %[1]d) sh[i] = %[9]s;
		barrier();
	}
	if (tid == 0) {
		t[g] = sh[%[1]d - 1];
		sh[%[1]d - 1] = %[4]s;
	}
	barrier();
	for (uint d = %[1]d / 2; d >= 1; d >>= 1) {
		uint i = (tid + 1) * 2 * d - 1;
		if (i < %[1]d) {
			%[3]s l = sh[i - d];
			sh[i - d] = sh[i];
			sh[i] = %[10]s;
		}
		barrier();
	}
	%[3]s e = sh[tid];
	uint o = row * n;
	for (uint j = 0; j < %[7]d; j++) {
		uint k = k0 + j;
		if (k < n) s[o + k] = %[11]s;
	}
}
`, scanLocal, GLSLType(sp.in), a, id, load, scanBlock, scanItems,
		scanCombine(sp.kind, "run", "load(base, k0 + j)"),
		scanCombine(sp.kind, "sh[i - d]", "sh[i]"),
		scanCombine(sp.kind, "sh[i]", "l"),
		scanCombine(sp.kind, "e", "v[j]"))
	return b.String()
}

// scanAddSource adds, in place, the scanned totals u ([rows, nb]) of the
// level above to s ([rows, n]): element k of a row gets block k/scanBlock
// - 1's. With count, the last element (rows is 1) goes to cnt[0] too.
func scanAddSource(k scanKind, acc tensor.Dtype, count bool) string {
	var b strings.Builder
	b.WriteString(Header(acc))
	a := ComputeType(acc)
	fmt.Fprintf(&b, `layout(local_size_x = %d) in;
layout(binding = 0) buffer B0 { %s s[]; };
layout(binding = 1) readonly buffer B1 { %s u[]; };
`, LocalSize, a, a)
	if count {
		fmt.Fprintf(&b, "layout(binding = 2) writeonly buffer B2 { %s cnt[]; };\n", a)
	}
	b.WriteString("layout(push_constant) uniform P { uint n; uint nb; uint total; };\n")
	b.WriteString(IndexGLSL)
	fmt.Fprintf(&b, `void main() {
	uint e = gid();
	if (e >= total) return;
	uint row = e / n;
	uint blk = (e %% n) / %d;
	%s v = s[e];
	if (blk > 0) {
		v = %s;
		s[e] = v;
	}
`, scanBlock, a, scanCombine(k, "u[row * nb + blk - 1]", "v"))
	if count {
		b.WriteString("\tif (e == total - 1) cnt[0] = v;\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// scanOutSource writes the op's output y ([outer, n + inc, inner], dtype
// out) from the first level s ([rows, n]) and, when blocks, the scanned
// totals u of the second: y = s + u[block - 1], the identity at the
// initial position (inc 1). Without s (n is 0) every element is the
// identity.
func scanOutSource(k scanKind, acc, out tensor.Dtype, hasS, blocks bool) string {
	var b strings.Builder
	b.WriteString(Header(acc, out))
	a := ComputeType(acc)
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", LocalSize)
	bind := 0
	if hasS {
		fmt.Fprintf(&b, "layout(binding = %d) readonly buffer B0 { %s s[]; };\n", bind, a)
		bind++
	}
	if blocks {
		fmt.Fprintf(&b, "layout(binding = %d) readonly buffer B1 { %s u[]; };\n", bind, a)
		bind++
	}
	fmt.Fprintf(&b, "layout(binding = %d) writeonly buffer B2 { %s y[]; };\n", bind, GLSLType(out))
	b.WriteString("layout(push_constant) uniform P { uint n; uint inner; uint nb; uint total; uint inc; };\n")
	b.WriteString(IndexGLSL)
	fmt.Fprintf(&b, `void main() {
	uint e = gid();
	if (e >= total) return;
	%s v = %s;
`, a, scanIdent(k, acc))
	if hasS {
		fmt.Fprintf(&b, `	uint m = n + inc;
	uint i = e %% inner;
	uint kk = (e / inner) %% m;
	uint row = (e / (inner * m)) * inner + i;
	if (kk >= inc) {
		uint k = kk - inc;
		v = s[row * n + k];
`)
		if blocks {
			fmt.Fprintf(&b, "\t\tuint blk = k / %d;\n\t\tif (blk > 0) v = %s;\n", scanBlock,
				scanCombine(k, "u[row * nb + blk - 1]", "v"))
		}
		b.WriteString("\t}\n")
	}
	fmt.Fprintf(&b, "\ty[e] = %s(v);\n}\n", GLSLType(out))
	return b.String()
}

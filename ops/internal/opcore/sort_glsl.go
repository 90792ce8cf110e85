package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// The kernels of the radix sort (sort.go) and of searchsorted. Every
// invocation does a bounded amount of work: sortItems elements, a
// sortRadix-entry scan, log2(sortLocal) barrier steps, or (searchsorted)
// at most 33 halvings.

const (
	sortLocal = 128                   // invocations per workgroup
	sortItems = 16                    // elements per invocation
	sortTile  = sortLocal * sortItems // elements per workgroup
	sortBits  = 4                     // bits of a radix digit
	sortRadix = 1 << sortBits         // digit values
)

// sortKeyBits returns the bits of dt's sort key.
func sortKeyBits(dt tensor.Dtype) int {
	if dt == tensor.Bool {
		return 1
	}
	return dt.Size() * 8
}

// sortKeyType is the GLSL type of dt's sort key.
func sortKeyType(dt tensor.Dtype) string {
	if dt.Size() == 8 {
		return "uint64_t"
	}
	return "uint"
}

// sortKeyGLSL defines KT key(T v): an unsigned key whose order is the
// sort order of dt's values: integers by value, floats with -0 equal to +0
// and every NaN equal and last. Descending keys reverse the order of the
// values, NaN still last. Keys of equal values are equal, so a stable sort
// by key keeps their input order.
func sortKeyGLSL(dt tensor.Dtype, descending bool) string {
	kt := sortKeyType(dt)
	bits := sortKeyBits(dt)
	mask := fmt.Sprintf("0x%xu", uint32(1<<bits-1))
	if bits == 32 {
		mask = "0xffffffffu"
	}
	if bits == 64 {
		mask = "0xfffffffffffffffful"
	}
	var body string
	switch dt {
	case tensor.Bool, tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
		body = fmt.Sprintf("\t%s k = %s(v);\n", kt, kt)
	case tensor.Int8:
		body = "\tuint k = (uint(int(v)) & 0xffu) ^ 0x80u;\n"
	case tensor.Int16:
		body = "\tuint k = (uint(int(v)) & 0xffffu) ^ 0x8000u;\n"
	case tensor.Int32:
		body = "\tuint k = uint(v) ^ 0x80000000u;\n"
	case tensor.Int64:
		body = "\tuint64_t k = uint64_t(v) ^ 0x8000000000000000ul;\n"
	case tensor.Float16, tensor.Float32, tensor.Float64:
		var bitsOf, sign, inf string
		switch dt {
		case tensor.Float16:
			bitsOf, sign, inf = "uint(float16BitsToUint16(v))", "0x8000u", "0x7c00u"
		case tensor.Float32:
			bitsOf, sign, inf = "floatBitsToUint(v)", "0x80000000u", "0x7f800000u"
		default:
			bitsOf, sign, inf = "doubleBitsToUint64(v)", "0x8000000000000000ul", "0x7ff0000000000000ul"
		}
		// NaN: the largest key, ascending and descending (no finite
		// value's key is mask either way); -0 is +0; negatives reverse
		// their order below the positives.
		body = fmt.Sprintf(`	%[1]s b = %[2]s;
	%[1]s mag = b & ~%[3]s & %[5]s;
	if (mag > %[4]s) return %[5]s;
	if (mag == %[1]s(0)) b = %[1]s(0);
	%[1]s k = (b & %[3]s) != %[1]s(0) ? (~b & %[5]s) : (b | %[3]s);
`, kt, bitsOf, sign, inf, mask)
	}
	if descending {
		body += fmt.Sprintf("\treturn %s - k;\n", mask)
	} else {
		body += "\treturn k;\n"
	}
	return fmt.Sprintf("%s key(%s v) {\n%s}\n", kt, GLSLType(dt), body)
}

// sortHeader is the header of a kernel computing keys of dt: float16's
// bits are a uint16_t.
func sortHeader(dt tensor.Dtype) string {
	if dt == tensor.Float16 {
		return Header(dt, tensor.Uint16, tensor.Uint64)
	}
	return Header(dt, tensor.Uint64)
}

// sortLayoutGLSL defines uint src(uint e): where element e of the sorted
// view, [rows, n] with rows = outer*inner, is in the tensor
// [outer, n, inner].
const sortLayoutGLSL = `uint src(uint e) {
	uint row = e / n;
	uint j = e - row * n;
	uint o = row / inner;
	uint i = row - o * inner;
	return (o * n + j) * inner + i;
}
`

// sortKeysSource fills keys[e] = key(x[src(e)]) and idx[e] = e.
func sortKeysSource(dt tensor.Dtype, descending bool) string {
	var b strings.Builder
	b.WriteString(sortHeader(dt))
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", LocalSize)
	fmt.Fprintf(&b, `layout(binding = 0) readonly buffer B0 { %s x[]; };
layout(binding = 1) writeonly buffer B1 { %s keys[]; };
layout(binding = 2) writeonly buffer B2 { uint idx[]; };
layout(push_constant) uniform P { uint total; uint n; uint inner; };
`, GLSLType(dt), sortKeyType(dt))
	b.WriteString(IndexGLSL)
	b.WriteString(sortLayoutGLSL)
	b.WriteString(sortKeyGLSL(dt, descending))
	b.WriteString(`void main() {
	uint e = gid();
	if (e >= total) return;
	keys[e] = key(x[src(e)]);
	idx[e] = e;
}
`)
	return b.String()
}

// sortDigitGLSL is the digit expression of element e: of its key, or of
// its row (idx[e] / n) in a row pass.
func sortDigitGLSL(rowPass bool) string {
	if rowPass {
		return "((idxIn[e] / n) >> shift) & 15u"
	}
	return "uint(keysIn[e] >> shift) & 15u"
}

// sortPassHead declares a pass's buffers: the input keys (not in a row
// pass) and indices (not in a key pass's histogram), the histogram, then,
// with outs, the output keys (not in a row pass) and indices.
func sortPassHead(kt string, rowPass bool, histAccess string, outs bool) string {
	var b strings.Builder
	b.WriteString(Header(tensor.Uint64))
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", sortLocal)
	bind := 0
	buf := func(access, typ, name string) {
		fmt.Fprintf(&b, "layout(binding = %d) %s buffer B%d { %s %s[]; };\n", bind, access, bind, typ, name)
		bind++
	}
	if !rowPass {
		buf("readonly", kt, "keysIn")
	}
	if rowPass || outs { // a key pass's histogram reads no indices
		buf("readonly", "uint", "idxIn")
	}
	buf(histAccess, "uint", "hist")
	if outs {
		if !rowPass {
			buf("writeonly", kt, "keysOut")
		}
		buf("writeonly", "uint", "idxOut")
	}
	b.WriteString("layout(push_constant) uniform P { uint total; uint n; uint nblocks; uint shift; };\n")
	fmt.Fprintf(&b, "const uint ITEMS = %du;\nconst uint WG = %du;\n", sortItems, sortLocal)
	b.WriteString("uint block() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }\n")
	return b.String()
}

// sortHistSource counts the digits of each tile of sortTile elements:
// hist[d*nblocks + b] is how many elements of tile b have digit d.
func sortHistSource(kt string, rowPass bool) string {
	var b strings.Builder
	b.WriteString(sortPassHead(kt, rowPass, "writeonly", false))
	fmt.Fprintf(&b, `shared uint h[16];
void main() {
	uint b = block();
	if (b >= nblocks) return;
	uint t = gl_LocalInvocationID.x;
	if (t < 16u) h[t] = 0u;
	barrier();
	for (uint k = 0u; k < ITEMS; k++) {
		uint e = b * ITEMS * WG + k * WG + t;
		if (e < total) atomicAdd(h[%s], 1u);
	}
	barrier();
	if (t < 16u) hist[t * nblocks + b] = h[t];
}
`, sortDigitGLSL(rowPass))
	return b.String()
}

// sortScatterSource moves each element of tile b to its place by digit,
// stably: hist holds the exclusive scan of the counts (digit-major, so
// every digit-d element of earlier tiles and every smaller digit comes
// first); within the tile, invocation t's run of ITEMS elements goes after
// those of invocations before it with the same digit (cnt, scanned in
// digit-major order), in order.
func sortScatterSource(kt string, rowPass bool) string {
	var b strings.Builder
	b.WriteString(sortPassHead(kt, rowPass, "readonly", true))
	move := "idxOut[p] = idxIn[e];"
	if !rowPass {
		move = "keysOut[p] = keysIn[e]; " + move
	}
	fmt.Fprintf(&b, `shared uint cnt[16u * WG];
shared uint part[WG];
shared uint gb[16];
void main() {
	uint b = block();
	if (b >= nblocks) return;
	uint t = gl_LocalInvocationID.x;
	for (uint d = 0u; d < 16u; d++) cnt[d * WG + t] = 0u;
	uint base = b * ITEMS * WG + t * ITEMS;
	uint dg[ITEMS];
	for (uint k = 0u; k < ITEMS; k++) {
		uint e = base + k;
		dg[k] = 16u;
		if (e < total) {
			dg[k] = %[1]s;
			cnt[dg[k] * WG + t] += 1u;
		}
	}
	barrier();
	// Exclusive scan of cnt in index order: each invocation its 16
	// entries, then the invocations' sums (Hillis-Steele).
	uint s = 0u;
	for (uint i = 0u; i < 16u; i++) {
		uint v = cnt[t * 16u + i];
		cnt[t * 16u + i] = s;
		s += v;
	}
	part[t] = s;
	barrier();
	for (uint off = 1u; off < WG; off <<= 1) {
		uint v = t >= off ? part[t - off] : 0u;
		barrier();
		part[t] += v;
		barrier();
	}
	uint pre = part[t] - s;
	for (uint i = 0u; i < 16u; i++) cnt[t * 16u + i] += pre;
	barrier();
	if (t < 16u) gb[t] = hist[t * nblocks + b] - cnt[t * WG];
	barrier();
	for (uint k = 0u; k < ITEMS; k++) {
		uint d = dg[k];
		if (d < 16u) {
			uint e = base + k;
			uint p = gb[d] + cnt[d * WG + t];
			cnt[d * WG + t] += 1u;
			%[2]s
		}
	}
}
`, sortDigitGLSL(rowPass), move)
	return b.String()
}

// sortScanSource scans data[0:m) in place, exclusive, in chunks of
// sortTile: chunk b's entries get the sum of the chunk's entries before
// them, and sums[b] the chunk's total.
func sortScanSource() string {
	var b strings.Builder
	b.WriteString("#version 450\n")
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", sortLocal)
	fmt.Fprintf(&b, `layout(binding = 0) buffer B0 { uint data[]; };
layout(binding = 1) writeonly buffer B1 { uint sums[]; };
layout(push_constant) uniform P { uint m; uint chunks; };
const uint ITEMS = %du;
const uint WG = %du;
shared uint part[WG];
void main() {
	uint b = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	if (b >= chunks) return;
	uint t = gl_LocalInvocationID.x;
	uint base = b * ITEMS * WG + t * ITEMS;
	uint s = 0u;
	for (uint i = 0u; i < ITEMS; i++) {
		if (base + i < m) {
			uint v = data[base + i];
			data[base + i] = s;
			s += v;
		}
	}
	part[t] = s;
	barrier();
	for (uint off = 1u; off < WG; off <<= 1) {
		uint v = t >= off ? part[t - off] : 0u;
		barrier();
		part[t] += v;
		barrier();
	}
	uint pre = part[t] - s;
	for (uint i = 0u; i < ITEMS; i++) {
		if (base + i < m) data[base + i] += pre;
	}
	if (t == WG - 1u) sums[b] = part[t];
}
`, sortItems, sortLocal)
	return b.String()
}

// sortScanAddSource adds sums[i / sortTile] to data[i]: the scanned totals of
// the chunks before i's.
func sortScanAddSource() string {
	var b strings.Builder
	b.WriteString("#version 450\n")
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", LocalSize)
	fmt.Fprintf(&b, `layout(binding = 0) buffer B0 { uint data[]; };
layout(binding = 1) readonly buffer B1 { uint sums[]; };
layout(push_constant) uniform P { uint m; };
`)
	b.WriteString(IndexGLSL)
	fmt.Fprintf(&b, `void main() {
	uint i = gid();
	if (i >= m) return;
	data[i] += sums[i / %du];
}
`, sortTile)
	return b.String()
}

// sortGatherSource writes the sorted row: position p of the sorted view
// holds element idx[p]; values[src(p)] = x[src(idx[p])] and
// indices[src(p)] = idx[p] %% n (its position in its row).
func sortGatherSource(dt tensor.Dtype, values, indices bool) string {
	var b strings.Builder
	b.WriteString(Header(dt, tensor.Int64))
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", LocalSize)
	bind := 0
	if values { // x only where read: a binding the shader does not use is not in its module
		fmt.Fprintf(&b, "layout(binding = 0) readonly buffer B0 { %s x[]; };\n", GLSLType(dt))
		bind++
	}
	fmt.Fprintf(&b, "layout(binding = %d) readonly buffer B%d { uint idx[]; };\n", bind, bind)
	bind++
	if values {
		fmt.Fprintf(&b, "layout(binding = %d) writeonly buffer B%d { %s vals[]; };\n", bind, bind, GLSLType(dt))
		bind++
	}
	if indices {
		fmt.Fprintf(&b, "layout(binding = %d) writeonly buffer B%d { int64_t inds[]; };\n", bind, bind)
	}
	b.WriteString("layout(push_constant) uniform P { uint total; uint n; uint inner; };\n")
	b.WriteString(IndexGLSL)
	b.WriteString(sortLayoutGLSL)
	b.WriteString(`void main() {
	uint p = gid();
	if (p >= total) return;
	uint e = idx[p];
	uint d = src(p);
`)
	if values {
		b.WriteString("\tvals[d] = x[src(e)];\n")
	}
	if indices {
		b.WriteString("\tinds[d] = int64_t(e - (e / n) * n);\n")
	}
	b.WriteString("}\n")
	return b.String()
}

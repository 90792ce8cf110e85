package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

func init() {
	Builtin("matmul", func(o Owner, in, out []*tensor.Tensor, _ Attrs) (*Op, error) {
		if err := Inputs("matmul", in, 2); err != nil {
			return nil, err
		}
		if err := TooMany("matmul", out, 1); err != nil {
			return nil, err
		}
		return Matmul(o, in[0], in[1], OutAt(out, 0))
	})
}

// Matmul prepares out = a @ b with NumPy's matmul semantics: a is
// [..., m, k] and b [..., k, n], the batch dimensions (all but the last
// two) broadcast against each other, and out is [batch..., m, n]. A 1-D a
// is a row vector [1, k] and a 1-D b a column vector [k, 1], and the
// dimension added is removed from the result; 0-d operands are an error.
// out nil allocates it.
//
// Dtypes: float16 (products summed in float32, rounded once to float16),
// float32, float64 (where the device has shaderFloat64), complex64 and
// complex128 (complex products, summed per part), and the integer
// types, which wrap as NumPy's do. a and b must have the same dtype; bool
// is refused. out must not share memory with a or b. A k of 0 gives
// zeros.
//
// The kernel tiles the output in blocks of up to 128×128 per workgroup
// of 128 invocations, each invocation summing a block of up to 16×8 in
// registers over slices of k staged in shared memory; the batch is the
// grid's z. A grid past the device's maxComputeWorkGroupCount, or a k
// whose loop would pass lavapipe's iteration cap, is cut into several
// dispatches (those of later slices of k add to the output).
func Matmul(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "matmul", a, b)
	if err != nil {
		return nil, err
	}
	return op.Done(op.MatMul(a, b, out, Tiles{}))
}

// Tiles is a matmul kernel's blocking: BM×BN output elements per
// workgroup, TM×TN per invocation, BK of k staged per step. The zero
// value picks one for the shape (pickTiles).
type Tiles struct {
	BM, BN, BK, TM, TN int
	// noBarrier leaves barrier() out: a broken kernel, for the test that
	// shows the tests catch it.
	noBarrier bool
}

// pickTiles returns the blocking for an m×n output. lavapipe runs 8
// invocations as the lanes of one SIMD vector and turns every load from a
// buffer or shared memory into a loop over the lanes, one per scalar or
// vector loaded; so the more products per load the faster: large blocks
// per invocation, read from shared memory as 4-vectors (measured on
// lavapipe, 1024³ float32: 16×8 blocks with vector loads 5.7 GFLOP per
// CPU-second, 8×8 with scalar loads 2.7, 4×4 scalar 1.5). Thin outputs (a
// matrix-vector product) get tiles that waste fewer invocations.
func pickTiles(m, n int) Tiles {
	switch {
	case m >= 128 && n >= 128:
		return Tiles{BM: 128, BN: 128, BK: 4, TM: 16, TN: 8}
	case m <= 8 && n <= 8:
		return Tiles{BM: 8, BN: 8, BK: 16, TM: 1, TN: 1}
	case m <= 8:
		return Tiles{BM: 8, BN: 256, BK: 8, TM: 1, TN: 8}
	case n <= 8:
		return Tiles{BM: 256, BN: 8, BK: 8, TM: 8, TN: 1}
	}
	return Tiles{BM: 64, BN: 64, BK: 4, TM: 8, TN: 8}
}

// invocations returns the workgroup size.
func (t Tiles) invocations() int { return (t.BM / t.TM) * (t.BN / t.TN) }

// matmulMaxKTiles is the most k-steps one dispatch loops over. lavapipe
// silently ends an invocation's loops once they have run 65535
// iterations in all (nested loops count too: the kernel has no loop but
// the one over k); past this, k is cut into dispatches that add to the
// output.
var matmulMaxKTiles = 32768

// MatmulGridLimit, when not zero, replaces maxComputeWorkGroupCount (in
// every dimension) for matmul and the 2-D transpose, for tests of the
// cutting.
var MatmulGridLimit uint32

func (op *Op) MatMul(a, b, out *tensor.Tensor, t Tiles) error {
	dt := a.Dtype()
	if b.Dtype() != dt {
		return op.Errorf("mismatched dtypes: a is %v, b is %v", dt, b.Dtype())
	}
	if dt == tensor.Bool || !dt.Valid() {
		return op.Unsupported(dt, "float16, float32, float64, complex64, complex128 and the integer types")
	}
	if err := op.RequireDtypes(dt); err != nil {
		return err
	}
	as, bs := a.Shape(), b.Shape()
	if len(as) == 0 || len(bs) == 0 {
		return op.Errorf("matmul of a 0-d tensor (shapes %v and %v): use mul", as, bs)
	}
	// Promote 1-D operands.
	if len(as) == 1 {
		as = []int{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int{bs[0], 1}
	}
	m, k := as[len(as)-2], as[len(as)-1]
	k2, n := bs[len(bs)-2], bs[len(bs)-1]
	if k != k2 {
		return op.Errorf("inner dimensions differ: a is %v (k = %d), b is %v (k = %d)", a.Shape(), k, b.Shape(), k2)
	}
	batch, err := BroadcastShapes(op.name, as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return err
	}
	shape := append([]int(nil), batch...)
	if len(a.Shape()) > 1 {
		shape = append(shape, m)
	}
	if len(b.Shape()) > 1 {
		shape = append(shape, n)
	}
	c, err := op.Output(out, dt, shape)
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	nb := Numel(batch)
	if nb == 0 || m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		// Zeros, without binding the empty a and b.
		return op.Zeros(c)
	}
	// Element strides of each batch dimension in a, b and out.
	sa := StridesFor(as[:len(as)-2], batch)
	sb := StridesFor(bs[:len(bs)-2], batch)
	sc := Contiguous(batch)
	for i := range batch {
		sa[i] *= m * k
		sb[i] *= k * n
		sc[i] *= m * n
	}
	dims, st := Merge(batch, sa, sb, sc)
	if len(dims) > MaxRank {
		return op.Errorf("%d batch dimensions after merging, at most %d", len(dims), MaxRank)
	}
	lim := op.dev.Info.Limits.MaxComputeWorkGroupCount
	if MatmulGridLimit != 0 {
		lim = [3]uint32{MatmulGridLimit, MatmulGridLimit, MatmulGridLimit}
	}
	if t.BM == 0 {
		t = pickTiles(m, n)
	}
	if cx := (Tiles{BM: 32, BN: 32, BK: 8, TM: 2, TN: 2}); dt.IsComplex() && (t.TM%4 == 0 && t.TN%4 == 0 || (t.BM+t.BN)*t.BK > (cx.BM+cx.BN)*cx.BK) {
		// Complex products take the scalar kernel (no 4-vectors of
		// vec2), in blocks of 2×2, and tiles whose dvec2s fit in shared
		// memory.
		t = cx
	}
	if sk := splitK(dt, nb, m, n, k); sk > 1 && !t.noBarrier {
		return op.matmulSplit(a, b, c, sk, nb, m, n, k, dims, st)
	}
	gx, gy := mmCeil(n, t.BN), mmCeil(m, t.BM)
	kstep := matmulMaxKTiles * t.BK
	ts := []*tensor.Tensor{a, b, c}
	for k0 := 0; k0 < k; k0 += kstep {
		k1 := min(k, k0+kstep)
		src := matmulGLSL(dt, len(dims), k0 > 0, t)
		for z0 := 0; z0 < nb; z0 += int(lim[2]) {
			for y0 := 0; y0 < gy; y0 += int(lim[1]) {
				for x0 := 0; x0 < gx; x0 += int(lim[0]) {
					groups := [3]uint32{uint32(min(gx-x0, int(lim[0]))), uint32(min(gy-y0, int(lim[1]))), uint32(min(nb-z0, int(lim[2])))}
					push := []any{uint32(m), uint32(n), uint32(k), uint32(k0), uint32(k1), uint32(x0), uint32(y0), uint32(z0)}
					for _, s := range append([][]int{dims}, st[:2]...) {
						for _, v := range s {
							push = append(push, uint32(v))
						}
					}
					if err := op.Dispatch(src, ts, groups, push...); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// Zeros adds a dispatch that writes zeros to c.
func (op *Op) Zeros(c *tensor.Tensor) error {
	groups, err := op.Grid(uint64(c.Len()), LocalSize)
	if err != nil {
		return err
	}
	src := Header(c.Dtype()) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) writeonly buffer C { %s c[]; };
layout(push_constant) uniform P { uint n; } p;
%svoid main() {
	uint i = gid();
	if (i < p.n) {
		c[i] = %s(0);
	}
}
`, LocalSize, GLSLType(c.Dtype()), IndexGLSL, GLSLType(c.Dtype()))
	return op.Dispatch(src, []*tensor.Tensor{c}, groups, uint32(c.Len()))
}

func mmCeil(a, b int) int { return (a + b - 1) / b }

// matmulGLSL generates the tiled kernel for dtype dt over rank merged
// batch dimensions. accumulate adds to the output instead of writing it
// (the second and later slices of a cut k).
func matmulGLSL(dt tensor.Dtype, rank int, accumulate bool, t Tiles) string {
	var b strings.Builder
	b.WriteString(Header(dt))
	st, ct := GLSLType(dt), ComputeType(dt)
	wg := t.invocations()
	tx := t.BN / t.TN // invocations along a row of the tile
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", wg)
	if dt.IsComplex() {
		b.WriteString(ComplexGLSL(dt))
	}
	fmt.Fprintf(&b, "layout(std430, binding = 0) readonly buffer A { %s a[]; };\n", st)
	fmt.Fprintf(&b, "layout(std430, binding = 1) readonly buffer B { %s b[]; };\n", st)
	access := "writeonly "
	if accumulate {
		access = ""
	}
	fmt.Fprintf(&b, "layout(std430, binding = 2) %sbuffer C { %s c[]; };\n", access, st)
	b.WriteString("layout(push_constant) uniform P {\n\tuint m, n, k, k0, k1, x0, y0, z0;\n")
	if rank > 0 {
		fmt.Fprintf(&b, "\tuint dims[%d];\n\tuint sa[%d];\n\tuint sb[%d];\n", rank, rank, rank)
	}
	b.WriteString("} p;\n")
	fmt.Fprintf(&b, "const uint BM = %d, BN = %d, BK = %d, TM = %d, TN = %d, WG = %d, TX = %d;\n",
		t.BM, t.BN, t.BK, t.TM, t.TN, wg, tx)
	if t.TM%4 == 0 && t.TN%4 == 0 {
		matmulVec4GLSL(&b, dt, rank, accumulate, t)
		return b.String()
	}
	// The A tile is stored k-major, so an invocation's TM rows of one k
	// are neighbours, as are its TN columns of the B tile.
	fmt.Fprintf(&b, "shared %s As[BK][BM];\nshared %s Bs[BK][BN];\n", ct, ct)
	barrier := "\tbarrier();\n"
	if t.noBarrier {
		barrier = ""
	}
	// The code is straight-line but for the loop over k: lavapipe counts
	// every loop iteration of an invocation, nested ones included, against
	// one cap (see matmulMaxKTiles).
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("void main() {\n")
	w("\tuint tid = gl_LocalInvocationIndex;\n")
	w("\tuint tcol = tid %% TX, trow = tid / TX;\n")
	w("\tuint row0 = (gl_WorkGroupID.y + p.y0) * BM;\n")
	w("\tuint col0 = (gl_WorkGroupID.x + p.x0) * BN;\n")
	w("\tuint bi = gl_WorkGroupID.z + p.z0;\n")
	w("\tuint offA = 0u, offB = 0u, offC = bi * p.m * p.n;\n")
	if rank > 0 {
		w("\tuint r = bi, i;\n")
		for d := rank - 1; d >= 0; d-- {
			w("\ti = r %% p.dims[%d]; r /= p.dims[%d]; offA += i * p.sa[%d]; offB += i * p.sb[%d];\n", d, d, d, d)
		}
	}
	for i := range t.TM {
		for j := range t.TN {
			w("\t%s acc%d_%d = %s(0);\n", ct, i, j, ct)
		}
	}
	w("\tbool full = row0 + BM <= p.m && col0 + BN <= p.n;\n")
	w("\tfor (uint kt = p.k0; kt < p.k1; kt += BK) {\n")
	// Consecutive invocations load consecutive elements of a row of a and
	// of b. A tile inside the matrices (the same answer for the whole
	// workgroup) skips the bounds checks.
	w("\t\tif (full && kt + BK <= p.k1) {\n")
	for e := 0; e < t.BM*t.BK; e += wg {
		w("\t\t\tif (%s) {\n\t\t\t\tuint e = tid + %du, rr = e / BK, kk = e %% BK;\n", stageGuard(e, wg, t.BM*t.BK), e)
		w("\t\t\t\tAs[kk][rr] = %s(a[offA + (row0 + rr) * p.k + kt + kk]);\n\t\t\t}\n", ct)
	}
	for e := 0; e < t.BK*t.BN; e += wg {
		w("\t\t\tif (%s) {\n\t\t\t\tuint e = tid + %du, kk = e / BN, cc = e %% BN;\n", stageGuard(e, wg, t.BK*t.BN), e)
		w("\t\t\t\tBs[kk][cc] = %s(b[offB + (kt + kk) * p.n + col0 + cc]);\n\t\t\t}\n", ct)
	}
	w("\t\t} else {\n")
	for e := 0; e < t.BM*t.BK; e += wg {
		w("\t\t\tif (%s) {\n\t\t\t\tuint e = tid + %du, rr = e / BK, kk = e %% BK, gr = row0 + rr, gk = kt + kk;\n", stageGuard(e, wg, t.BM*t.BK), e)
		w("\t\t\t\t%s v = %s(0);\n\t\t\t\tif (gr < p.m && gk < p.k1) {\n\t\t\t\t\tv = %s(a[offA + gr * p.k + gk]);\n\t\t\t\t}\n", ct, ct, ct)
		w("\t\t\t\tAs[kk][rr] = v;\n\t\t\t}\n")
	}
	for e := 0; e < t.BK*t.BN; e += wg {
		w("\t\t\tif (%s) {\n\t\t\t\tuint e = tid + %du, kk = e / BN, cc = e %% BN, gc = col0 + cc, gk = kt + kk;\n", stageGuard(e, wg, t.BK*t.BN), e)
		w("\t\t\t\t%s v = %s(0);\n\t\t\t\tif (gc < p.n && gk < p.k1) {\n\t\t\t\t\tv = %s(b[offB + gk * p.n + gc]);\n\t\t\t\t}\n", ct, ct, ct)
		w("\t\t\t\tBs[kk][cc] = v;\n\t\t\t}\n")
	}
	w("\t\t}\n")
	w("\t%s", barrier)
	w("\t\t%s ", ct)
	for i := range t.TM {
		w("a%d, ", i)
	}
	for j := range t.TN {
		w("b%d", j)
		if j < t.TN-1 {
			w(", ")
		}
	}
	w(";\n")
	for kk := range t.BK {
		for i := range t.TM {
			w("\t\ta%d = As[%d][trow * TM + %d];\n", i, kk, i)
		}
		for j := range t.TN {
			w("\t\tb%d = Bs[%d][tcol + %d];\n", j, kk, j*tx)
		}
		for i := range t.TM {
			for j := range t.TN {
				if dt.IsComplex() {
					w("\t\tacc%d_%d += %s;\n", i, j, Cfn("cmul", dt, fmt.Sprintf("a%d, b%d", i, j)))
				} else {
					w("\t\tacc%d_%d += a%d * b%d;\n", i, j, i, j)
				}
			}
		}
	}
	w("\t%s", barrier)
	w("\t}\n")
	for i := range t.TM {
		w("\tif (row0 + trow * TM + %d < p.m) {\n", i)
		w("\t\tuint o = offC + (row0 + trow * TM + %d) * p.n + col0 + tcol;\n", i)
		for j := range t.TN {
			w("\t\tif (col0 + tcol + %d < p.n) {\n", j*tx)
			if accumulate {
				w("\t\t\tc[o + %d] = %s(%s(c[o + %d]) + acc%d_%d);\n", j*tx, st, ct, j*tx, i, j)
			} else {
				w("\t\t\tc[o + %d] = %s(acc%d_%d);\n", j*tx, st, i, j)
			}
			w("\t\t}\n")
		}
		w("\t}\n")
	}
	w("}\n")
	return b.String()
}

// stageGuard is the condition under which invocation tid stages element
// tid+e of a tile of total elements: always, but in a last, partial round.
func stageGuard(e, wg, total int) string {
	if e+wg <= total {
		return "true"
	}
	return fmt.Sprintf("tid < %du", total-e)
}

// vec4Of returns the 4-vector of GLSL scalar type ct.
func vec4Of(ct string) string {
	switch ct {
	case "float":
		return "vec4"
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
	return "invalid"
}

// matmulVec4GLSL writes the body of the kernel for blocks of TM×TN, both
// multiples of 4, after the declarations: the tiles are 4-vectors in
// shared memory, so an invocation reads its TM rows and TN columns of one
// k in TM/4 + TN/4 loads (lavapipe turns every load into a loop over the
// SIMD lanes, one per vector rather than per element). Invocation (trow,
// tcol) computes rows trow·TM.. and columns tcol·TN.. of the tile.
func matmulVec4GLSL(b *strings.Builder, dt tensor.Dtype, rank int, accumulate bool, t Tiles) {
	st, ct := GLSLType(dt), ComputeType(dt)
	vt := vec4Of(ct)
	wg := t.invocations()
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("shared %s As[BK][BM / 4u];\nshared %s Bs[BK][BN / 4u];\n", vt, vt)
	w("uint offA = 0u, offB = 0u;\n")
	w("%s ldA(uint gr, uint gk) {\n\t%s v = %s(0);\n\tif (gr < p.m && gk < p.k1) {\n\t\tv = %s(a[offA + gr * p.k + gk]);\n\t}\n\treturn v;\n}\n", ct, ct, ct, ct)
	w("%s ldB(uint gk, uint gc) {\n\t%s v = %s(0);\n\tif (gc < p.n && gk < p.k1) {\n\t\tv = %s(b[offB + gk * p.n + gc]);\n\t}\n\treturn v;\n}\n", ct, ct, ct, ct)
	barrier := "\t\tbarrier();\n"
	if t.noBarrier {
		barrier = ""
	}
	w("void main() {\n")
	w("\tuint tid = gl_LocalInvocationIndex;\n")
	w("\tuint tcol = tid %% TX, trow = tid / TX;\n")
	w("\tuint row0 = (gl_WorkGroupID.y + p.y0) * BM;\n")
	w("\tuint col0 = (gl_WorkGroupID.x + p.x0) * BN;\n")
	w("\tuint bi = gl_WorkGroupID.z + p.z0;\n")
	w("\tuint offC = bi * p.m * p.n;\n")
	if rank > 0 {
		w("\tuint r = bi, i;\n")
		for d := rank - 1; d >= 0; d-- {
			w("\ti = r %% p.dims[%d]; r /= p.dims[%d]; offA += i * p.sa[%d]; offB += i * p.sb[%d];\n", d, d, d, d)
		}
	}
	for i := range t.TM {
		for j := range t.TN {
			w("\t%s acc%d_%d = %s(0);\n", ct, i, j, ct)
		}
	}
	w("\tbool full = row0 + BM <= p.m && col0 + BN <= p.n;\n")
	w("\tfor (uint kt = p.k0; kt < p.k1; kt += BK) {\n")
	// Staging, a 4-vector per invocation and round: 4 rows of a at one k
	// (consecutive invocations take consecutive k), 4 columns of b.
	na, nb := t.BM*t.BK/4, t.BK*t.BN/4
	w("\t\tif (full && kt + BK <= p.k1) {\n")
	for e := 0; e < na; e += wg {
		w("\t\t\tif (%s) {\n\t\t\t\tuint e = tid + %du, kk = e %% BK, q = e / BK;\n", stageGuard(e, wg, na), e)
		w("\t\t\t\tuint o = offA + (row0 + 4u * q) * p.k + kt + kk;\n")
		w("\t\t\t\tAs[kk][q] = %s(%s(a[o]), %s(a[o + p.k]), %s(a[o + 2u * p.k]), %s(a[o + 3u * p.k]));\n\t\t\t}\n", vt, ct, ct, ct, ct)
	}
	for e := 0; e < nb; e += wg {
		w("\t\t\tif (%s) {\n\t\t\t\tuint e = tid + %du, kk = e / (BN / 4u), q = e %% (BN / 4u);\n", stageGuard(e, wg, nb), e)
		w("\t\t\t\tuint o = offB + (kt + kk) * p.n + col0 + 4u * q;\n")
		w("\t\t\t\tBs[kk][q] = %s(%s(b[o]), %s(b[o + 1u]), %s(b[o + 2u]), %s(b[o + 3u]));\n\t\t\t}\n", vt, ct, ct, ct, ct)
	}
	w("\t\t} else {\n")
	for e := 0; e < na; e += wg {
		w("\t\t\tif (%s) {\n\t\t\t\tuint e = tid + %du, kk = e %% BK, q = e / BK, gr = row0 + 4u * q, gk = kt + kk;\n", stageGuard(e, wg, na), e)
		w("\t\t\t\tAs[kk][q] = %s(ldA(gr, gk), ldA(gr + 1u, gk), ldA(gr + 2u, gk), ldA(gr + 3u, gk));\n\t\t\t}\n", vt)
	}
	for e := 0; e < nb; e += wg {
		w("\t\t\tif (%s) {\n\t\t\t\tuint e = tid + %du, kk = e / (BN / 4u), q = e %% (BN / 4u), gk = kt + kk, gc = col0 + 4u * q;\n", stageGuard(e, wg, nb), e)
		w("\t\t\t\tBs[kk][q] = %s(ldB(gk, gc), ldB(gk, gc + 1u), ldB(gk, gc + 2u), ldB(gk, gc + 3u));\n\t\t\t}\n", vt)
	}
	w("\t\t}\n")
	w("%s", barrier)
	comp := "xyzw"
	for kk := range t.BK {
		w("\t\t{\n")
		for i := range t.TM / 4 {
			w("\t\t\t%s a%d = As[%d][trow * %du + %du];\n", vt, i, kk, t.TM/4, i)
		}
		for j := range t.TN / 4 {
			w("\t\t\t%s b%d = Bs[%d][tcol * %du + %du];\n", vt, j, kk, t.TN/4, j)
		}
		for i := range t.TM {
			for j := range t.TN {
				w("\t\t\tacc%d_%d += a%d.%c * b%d.%c;\n", i, j, i/4, comp[i%4], j/4, comp[j%4])
			}
		}
		w("\t\t}\n")
	}
	w("%s", barrier)
	w("\t}\n")
	for i := range t.TM {
		w("\tif (row0 + trow * TM + %du < p.m) {\n", i)
		w("\t\tuint o = offC + (row0 + trow * TM + %du) * p.n;\n", i)
		for j := range t.TN {
			w("\t\tif (col0 + tcol * TN + %du < p.n) {\n", j)
			w("\t\t\tuint q = o + col0 + tcol * TN + %du;\n", j)
			if accumulate {
				w("\t\t\tc[q] = %s(%s(c[q]) + acc%d_%d);\n", st, ct, i, j)
			} else {
				w("\t\t\tc[q] = %s(acc%d_%d);\n", st, i, j)
			}
			w("\t\t}\n")
		}
		w("\t}\n")
	}
	w("}\n")
}

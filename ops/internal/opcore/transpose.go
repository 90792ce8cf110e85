package opcore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

func init() {
	Builtin("transpose", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs("transpose", in, 1); err != nil {
			return nil, err
		}
		if err := TooMany("transpose", out, 1); err != nil {
			return nil, err
		}
		return Transpose(o, in[0], at.Perm, OutAt(out, 0))
	})
}

// Transpose prepares out = x with its dimensions permuted, as NumPy's
// transpose: dimension i of out is dimension perm[i] of x; negative
// entries count from the end; perm nil reverses the dimensions. Any
// dtype; elements are moved bit for bit. out nil allocates it; it must not
// share memory with x.
//
// Dimensions that stay neighbours are merged first. A transpose of the
// last two (merged) dimensions, batched or not, goes through 32×32 tiles
// in shared memory, so reads and writes both walk memory in order (in
// 4-vectors for 4-byte elements when both sides are multiples of 4);
// other permutations gather, one invocation per output element.
func Transpose(o Owner, x *tensor.Tensor, perm []int, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "transpose", x)
	if err != nil {
		return nil, err
	}
	return op.Done(op.transpose(x, perm, out))
}

// transposeTile is the side of the tiles of the 2-D kernel, and
// transposeRows the rows of a tile one invocation moves.
const (
	transposeTile = 32
	transposeRows = 4
)

func (op *Op) transpose(x *tensor.Tensor, perm []int, out *tensor.Tensor) error {
	shape := x.Shape()
	r := len(shape)
	if perm == nil {
		perm = make([]int, r)
		for i := range perm {
			perm[i] = r - 1 - i
		}
	}
	if len(perm) != r {
		return op.Errorf("perm %v has %d entries for %d dimensions", perm, len(perm), r)
	}
	p := make([]int, r)
	for i, a := range perm {
		if a < -r || a >= r {
			return op.Errorf("perm %v: axis %d is out of range for %d dimensions", perm, a, r)
		}
		if a < 0 {
			a += r
		}
		if slices.Contains(p[:i], a) {
			return op.Errorf("perm %v repeats axis %d", perm, a)
		}
		p[i] = a
	}
	dt := x.Dtype()
	xs := Contiguous(shape)
	oshape := make([]int, r)
	src := make([]int, r) // stride in x of each dimension of out
	for i, a := range p {
		oshape[i], src[i] = shape[a], xs[a]
	}
	y, err := op.Output(out, dt, oshape)
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	n := Numel(oshape)
	if n == 0 {
		return nil
	}
	dims, st := Merge(oshape, Contiguous(oshape), src)
	in := st[1]
	ts := []*tensor.Tensor{x, y}
	// A batched 2-D transpose: out [B,] P, Q from x [B,] Q, P.
	if k := len(dims); k == 2 || k == 3 {
		P, Q := dims[k-2], dims[k-1]
		if in[k-2] == 1 && in[k-1] == P && (k == 2 || in[0] == P*Q) {
			return op.transpose2D(dt, P, Q, n/(P*Q), ts)
		}
	}
	if len(dims) > MaxRank {
		return op.Errorf("%d dimensions after merging, at most %d", len(dims), MaxRank)
	}
	groups, err := op.Grid(uint64(n), LocalSize)
	if err != nil {
		return err
	}
	push := []any{uint32(n)}
	for _, s := range [][]int{dims, in} {
		for _, v := range s {
			push = append(push, uint32(v))
		}
	}
	return op.Dispatch(GatherGLSL(dt, len(dims)), ts, groups, push...)
}

// BitTypes returns the GLSL types that move elements of dt bit for bit:
// in buffers and in shared memory (where 8- and 16-bit types widen to
// uint), and the header that declares them.
func BitTypes(dt tensor.Dtype) (buf, shared, head string) {
	head = "#version 450\n"
	switch dt.Size() {
	case 1:
		return "uint8_t", "uint", head + "#extension GL_EXT_shader_8bit_storage : require\n"
	case 2:
		return "uint16_t", "uint", head + "#extension GL_EXT_shader_16bit_storage : require\n"
	case 8:
		return "uvec2", "uvec2", head
	case 16:
		return "uvec4", "uvec4", head
	}
	return "uint", "uint", head
}

// GatherGLSL is the general permute: invocation i writes out[i], reading
// x at the offset its index over dims gives with the strides in.
func GatherGLSL(dt tensor.Dtype, rank int) string {
	buf, _, head := BitTypes(dt)
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", LocalSize)
	fmt.Fprintf(&b, "layout(std430, binding = 0) readonly buffer X { %s x[]; };\n", buf)
	fmt.Fprintf(&b, "layout(std430, binding = 1) writeonly buffer Y { %s y[]; };\n", buf)
	b.WriteString("layout(push_constant) uniform P {\n\tuint n;\n")
	if rank > 0 {
		fmt.Fprintf(&b, "\tuint dims[%d];\n\tuint in_[%d];\n", rank, rank)
	}
	b.WriteString("} p;\n")
	b.WriteString(IndexGLSL)
	b.WriteString("void main() {\n\tuint i = gid();\n\tif (i >= p.n) {\n\t\treturn;\n\t}\n\tuint r = i, src = 0u, d;\n")
	for d := rank - 1; d >= 0; d-- {
		fmt.Fprintf(&b, "\td = r %% p.dims[%d]; r /= p.dims[%d]; src += d * p.in_[%d];\n", d, d, d)
	}
	b.WriteString("\ty[i] = x[src];\n}\n")
	return b.String()
}

// transpose2D moves batch matrices of Q rows and P columns to P rows and Q
// columns: a workgroup reads a 32×32 tile row by row into shared memory
// and writes it out transposed, row by row. noBarrier leaves the barrier
// out, for the test that shows the tests catch it.
func (op *Op) transpose2D(dt tensor.Dtype, P, Q, batch int, ts []*tensor.Tensor) error {
	lim := op.dev.Info.Limits.MaxComputeWorkGroupCount
	if MatmulGridLimit != 0 {
		lim = [3]uint32{MatmulGridLimit, MatmulGridLimit, MatmulGridLimit}
	}
	gx, gy := mmCeil(P, transposeTile), mmCeil(Q, transposeTile)
	src := transpose2DGLSL(dt, transposeNoBarrier)
	if dt.Size() == 4 && P%4 == 0 && Q%4 == 0 {
		src = transpose2DVec4GLSL(transposeNoBarrier)
	}
	for z0 := 0; z0 < batch; z0 += int(lim[2]) {
		for y0 := 0; y0 < gy; y0 += int(lim[1]) {
			for x0 := 0; x0 < gx; x0 += int(lim[0]) {
				groups := [3]uint32{uint32(min(gx-x0, int(lim[0]))), uint32(min(gy-y0, int(lim[1]))), uint32(min(batch-z0, int(lim[2])))}
				if err := op.Dispatch(src, ts, groups, uint32(P), uint32(Q), uint32(x0), uint32(y0), uint32(z0)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// transposeNoBarrier is a test hook: the 2-D kernel without its barrier.
var transposeNoBarrier bool

// transpose2DGLSL: x holds batches of Q rows of P; y gets P rows of Q.
// The grid's x walks x's columns (P) in tiles, y its rows (Q), z the
// batch.
func transpose2DGLSL(dt tensor.Dtype, noBarrier bool) string {
	buf, sh, head := BitTypes(dt)
	barrier := "barrier();"
	if noBarrier {
		barrier = ""
	}
	// The tile's rows are padded by one element so a column of it is not
	// one bank on GPUs.
	return fmt.Sprintf(`%[1]slayout(local_size_x = %[4]d, local_size_y = %[5]d) in;
layout(std430, binding = 0) readonly buffer X { %[2]s x[]; };
layout(std430, binding = 1) writeonly buffer Y { %[2]s y[]; };
layout(push_constant) uniform P { uint P, Q, x0, y0, z0; } p;
const uint T = %[4]du, R = %[5]du;
shared %[3]s tile[T][T + 1u];
void main() {
	uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
	uint c0 = (gl_WorkGroupID.x + p.x0) * T, r0 = (gl_WorkGroupID.y + p.y0) * T;
	uint base = (gl_WorkGroupID.z + p.z0) * p.P * p.Q;
	for (uint j = ty; j < T; j += R) {
		uint r = r0 + j, c = c0 + tx;
		if (r < p.Q && c < p.P) {
			tile[j][tx] = %[3]s(x[base + r * p.P + c]);
		}
	}
	%[6]s
	for (uint j = ty; j < T; j += R) {
		uint r = c0 + j, c = r0 + tx;
		if (r < p.P && c < p.Q) {
			y[base + r * p.Q + c] = %[2]s(tile[tx][j]);
		}
	}
}
`, head, buf, sh, transposeTile, transposeTile/transposeRows, barrier)
}

// transpose2DVec4GLSL is transpose2DGLSL for 4-byte elements when P and Q
// are multiples of 4: every access moves a 4-vector (lavapipe loops over
// the SIMD lanes once per access, so this is a quarter of the loops). 64
// invocations each read 4 row pieces of 4 into the tile, then read back
// a 4×4 block, transpose it in registers and write 4 row pieces out.
func transpose2DVec4GLSL(noBarrier bool) string {
	barrier := "barrier();"
	if noBarrier {
		barrier = ""
	}
	return fmt.Sprintf(`#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { uvec4 x[]; };
layout(std430, binding = 1) writeonly buffer Y { uvec4 y[]; };
layout(push_constant) uniform P { uint P, Q, x0, y0, z0; } p;
const uint T = %[1]du;
shared uvec4 tile[T][T / 4u];
void main() {
	uint tid = gl_LocalInvocationIndex;
	uint c0 = (gl_WorkGroupID.x + p.x0) * T, r0 = (gl_WorkGroupID.y + p.y0) * T;
	uint base = (gl_WorkGroupID.z + p.z0) * p.P * p.Q;
	uint q = tid %% (T / 4u), j0 = tid / (T / 4u);
	for (uint j = j0; j < T; j += 64u / (T / 4u)) {
		uint r = r0 + j;
		if (r < p.Q && c0 + 4u * q < p.P) {
			tile[j][q] = x[(base + r * p.P + c0) / 4u + q];
		}
	}
	%[2]s
	uint bs = tid %% (T / 4u), bp = tid / (T / 4u);
	uvec4 v0 = tile[4u * bp][bs], v1 = tile[4u * bp + 1u][bs];
	uvec4 v2 = tile[4u * bp + 2u][bs], v3 = tile[4u * bp + 3u][bs];
	uint rq = r0 + 4u * bp;
	if (rq < p.Q) {
		uint o = (base + r0) / 4u + bp;
		uint c = c0 + 4u * bs;
		if (c < p.P) {
			y[o + c * (p.Q / 4u)] = uvec4(v0.x, v1.x, v2.x, v3.x);
		}
		if (c + 1u < p.P) {
			y[o + (c + 1u) * (p.Q / 4u)] = uvec4(v0.y, v1.y, v2.y, v3.y);
		}
		if (c + 2u < p.P) {
			y[o + (c + 2u) * (p.Q / 4u)] = uvec4(v0.z, v1.z, v2.z, v3.z);
		}
		if (c + 3u < p.P) {
			y[o + (c + 3u) * (p.Q / 4u)] = uvec4(v0.w, v1.w, v2.w, v3.w);
		}
	}
}
`, transposeTile, barrier)
}

package ops

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

func init() {
	builtin("matmul", func(o Owner, in, out []*tensor.Tensor, _ Attrs) (*Op, error) {
		if err := inputs("matmul", in, 2); err != nil {
			return nil, err
		}
		if err := tooMany("matmul", out, 1); err != nil {
			return nil, err
		}
		return Matmul(o, in[0], in[1], outAt(out, 0))
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
// float32, float64 (where the device has shaderFloat64), and the integer
// types, which wrap as NumPy's do. a and b must have the same dtype; bool
// is refused. out must not share memory with a or b. A k of 0 gives
// zeros.
//
// The kernel tiles the output in blocks of 64×64 per workgroup of 256
// invocations, each invocation summing a 4×4 block in registers over
// slices of k staged in shared memory; the batch is the grid's z. A grid
// past the device's maxComputeWorkGroupCount, or a k whose loop would
// pass the driver's iteration cap, is cut into several dispatches.
func Matmul(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	op, err := newOp(o, "matmul", a, b)
	if err != nil {
		return nil, err
	}
	return op.done(op.matmul(a, b, out, defaultTiles))
}

// tiles is a matmul kernel's blocking: BM×BN output elements per
// workgroup, TM×TN per invocation, BK of k staged per step.
type tiles struct {
	BM, BN, BK, TM, TN int
	// noBarrier leaves barrier() out: a broken kernel, for the test that
	// shows the tests catch it.
	noBarrier bool
}

var defaultTiles = tiles{BM: 64, BN: 64, BK: 16, TM: 4, TN: 4}

// invocations returns the workgroup size.
func (t tiles) invocations() int { return (t.BM / t.TM) * (t.BN / t.TN) }

// matmulMaxKTiles is the most k-steps one dispatch loops over. lavapipe
// ends a shader loop silently after 65535 iterations; past this, k is cut
// into dispatches that add to the output.
var matmulMaxKTiles = 32768

// matmulGridLimit, when not zero, replaces maxComputeWorkGroupCount (in
// every dimension), for tests of the cutting.
var matmulGridLimit uint32

func (op *Op) matmul(a, b, out *tensor.Tensor, t tiles) error {
	dt := a.Dtype()
	if b.Dtype() != dt {
		return op.errorf("mismatched dtypes: a is %v, b is %v", dt, b.Dtype())
	}
	if dt == tensor.Bool || !dt.Valid() {
		return op.unsupported(dt, "float16, float32, float64 and the integer types")
	}
	if err := op.requireDtypes(dt); err != nil {
		return err
	}
	as, bs := a.Shape(), b.Shape()
	if len(as) == 0 || len(bs) == 0 {
		return op.errorf("matmul of a 0-d tensor (shapes %v and %v): use mul", as, bs)
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
		return op.errorf("inner dimensions differ: a is %v (k = %d), b is %v (k = %d)", a.Shape(), k, b.Shape(), k2)
	}
	batch, err := broadcastShapes(op.name, as[:len(as)-2], bs[:len(bs)-2])
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
	c, err := op.output(out, dt, shape)
	if err != nil {
		return err
	}
	if err := op.noAlias(); err != nil {
		return err
	}
	nb := numel(batch)
	if nb == 0 || m == 0 || n == 0 {
		return nil
	}
	// Element strides of each batch dimension in a, b and out.
	sa := stridesFor(as[:len(as)-2], batch)
	sb := stridesFor(bs[:len(bs)-2], batch)
	sc := contiguous(batch)
	for i := range batch {
		sa[i] *= m * k
		sb[i] *= k * n
		sc[i] *= m * n
	}
	dims, st := merge(batch, sa, sb, sc)
	if len(dims) > maxRank {
		return op.errorf("%d batch dimensions after merging, at most %d", len(dims), maxRank)
	}
	lim := op.dev.Info.Limits.MaxComputeWorkGroupCount
	if matmulGridLimit != 0 {
		lim = [3]uint32{matmulGridLimit, matmulGridLimit, matmulGridLimit}
	}
	gx, gy := mmCeil(n, t.BN), mmCeil(m, t.BM)
	kstep := matmulMaxKTiles * t.BK
	ts := []*tensor.Tensor{a, b, c}
	for k0 := 0; k0 < max(k, 1); k0 += kstep {
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
					if err := op.dispatch(src, ts, groups, push...); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func mmCeil(a, b int) int { return (a + b - 1) / b }

// matmulGLSL generates the tiled kernel for dtype dt over rank merged
// batch dimensions. accumulate adds to the output instead of writing it
// (the second and later slices of a cut k).
func matmulGLSL(dt tensor.Dtype, rank int, accumulate bool, t tiles) string {
	var b strings.Builder
	b.WriteString(header(dt))
	st, ct := glslType(dt), computeType(dt)
	wg := t.invocations()
	tx := t.BN / t.TN // invocations along a row of the tile
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", wg)
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
	// The A tile is stored k-major, so an invocation's TM rows of one k
	// are neighbours, as are its TN columns of the B tile.
	fmt.Fprintf(&b, "shared %s As[BK][BM];\nshared %s Bs[BK][BN];\n", ct, ct)
	barrier := "barrier();"
	if t.noBarrier {
		barrier = ""
	}
	fmt.Fprintf(&b, `
void main() {
	uint tid = gl_LocalInvocationIndex;
	uint tcol = tid %% TX, trow = tid / TX;
	uint row0 = (gl_WorkGroupID.y + p.y0) * BM;
	uint col0 = (gl_WorkGroupID.x + p.x0) * BN;
	uint bi = gl_WorkGroupID.z + p.z0;
	uint offA = 0u, offB = 0u;
	uint offC = bi * p.m * p.n;
%[4]s	%[1]s acc[TM][TN];
	for (uint i = 0u; i < TM; i++) {
		for (uint j = 0u; j < TN; j++) {
			acc[i][j] = %[1]s(0);
		}
	}
	for (uint kt = p.k0; kt < p.k1; kt += BK) {
		for (uint e = tid; e < BM * BK; e += WG) {
			uint rr = e / BK, kk = e %% BK;
			uint gr = row0 + rr, gk = kt + kk;
			As[kk][rr] = (gr < p.m && gk < p.k1) ? %[1]s(a[offA + gr * p.k + gk]) : %[1]s(0);
		}
		for (uint e = tid; e < BK * BN; e += WG) {
			uint kk = e / BN, cc = e %% BN;
			uint gc = col0 + cc, gk = kt + kk;
			Bs[kk][cc] = (gc < p.n && gk < p.k1) ? %[1]s(b[offB + gk * p.n + gc]) : %[1]s(0);
		}
		%[2]s
		for (uint kk = 0u; kk < BK; kk++) {
			%[1]s av[TM], bv[TN];
			for (uint i = 0u; i < TM; i++) {
				av[i] = As[kk][trow * TM + i];
			}
			for (uint j = 0u; j < TN; j++) {
				bv[j] = Bs[kk][tcol + j * TX];
			}
			for (uint i = 0u; i < TM; i++) {
				for (uint j = 0u; j < TN; j++) {
					acc[i][j] += av[i] * bv[j];
				}
			}
		}
		%[2]s
	}
	for (uint i = 0u; i < TM; i++) {
		uint gr = row0 + trow * TM + i;
		for (uint j = 0u; j < TN; j++) {
			uint gc = col0 + tcol + j * TX;
			if (gr < p.m && gc < p.n) {
				%[3]s
			}
		}
	}
}
`, ct, barrier, matmulStore(st, ct, accumulate), batchGLSL(rank))
	return b.String()
}

func matmulStore(st, ct string, accumulate bool) string {
	if accumulate {
		return fmt.Sprintf("c[offC + gr * p.n + gc] = %s(%s(c[offC + gr * p.n + gc]) + acc[i][j]);", st, ct)
	}
	return fmt.Sprintf("c[offC + gr * p.n + gc] = %s(acc[i][j]);", st)
}

// batchGLSL decodes the batch index bi into the offsets of a and b.
func batchGLSL(rank int) string {
	if rank == 0 {
		return ""
	}
	return fmt.Sprintf(`	uint r = bi;
	for (int d = %d; d >= 0; d--) {
		uint i = r %% p.dims[d];
		r /= p.dims[d];
		offA += i * p.sa[d];
		offB += i * p.sb[d];
	}
`, rank-1)
}

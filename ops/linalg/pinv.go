package linalg

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	opcore.DefSchema("1 or 2 (x, rtol)", 1, []string{"rtol"}, "pinv", "matrix_rank")
	opcore.Builtin("pinv", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if len(in) != 1 && len(in) != 2 {
			return nil, opcore.Inputs("pinv", in, 1)
		}
		if err := opcore.TooMany("pinv", out, 1); err != nil {
			return nil, err
		}
		return Pinv(o, in[0], rtolInput(in), at.Rtol, opcore.OutAt(out, 0))
	})
	opcore.Builtin("matrix_rank", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if len(in) != 1 && len(in) != 2 {
			return nil, opcore.Inputs("matrix_rank", in, 1)
		}
		if err := opcore.TooMany("matrix_rank", out, 1); err != nil {
			return nil, err
		}
		return MatrixRank(o, in[0], rtolInput(in), at.Rtol, opcore.OutAt(out, 0))
	})
}

func rtolInput(in []*tensor.Tensor) *tensor.Tensor {
	if len(in) == 2 {
		return in[1]
	}
	return nil
}

// Pinv computes the Moore-Penrose pseudo-inverse of each matrix of x
// ([..., M, N] gives [..., N, M]; "pinv"): V diag(1/σ) Uᵀ over the
// singular values σ > rtol·σ_max, from the one-sided Jacobi SVD
// (jacobi.go) and a batched matmul. The cutoff rtol is a float
// (Attrs.Rtol), or a tensor of one per matrix (a second input of the
// stack's shape, or of one element), or by default max(M, N)·eps of x's
// (real) dtype, as the array API gives it. Float32, float64, complex64
// and complex128 (V diag(1/σ) Uᴴ, x's dtype); float16 computes in
// float32.
func Pinv(o opcore.Owner, x, rtolT *tensor.Tensor, rtol *float64, out *tensor.Tensor) (*opcore.Op, error) {
	ins := []*tensor.Tensor{x}
	if rtolT != nil {
		ins = append(ins, rtolT)
	}
	op, err := opcore.NewOp(o, "pinv", ins...)
	if err != nil {
		return nil, err
	}
	return op.Done(pinv(op, x, rtolT, rtol, out))
}

// MatrixRank counts the singular values σ > rtol·σ_max of each matrix of
// x ("matrix_rank"; int64, the stack's shape). rtol as for Pinv.
func MatrixRank(o opcore.Owner, x, rtolT *tensor.Tensor, rtol *float64, out *tensor.Tensor) (*opcore.Op, error) {
	ins := []*tensor.Tensor{x}
	if rtolT != nil {
		ins = append(ins, rtolT)
	}
	op, err := opcore.NewOp(o, "matrix_rank", ins...)
	if err != nil {
		return nil, err
	}
	return op.Done(matrixRank(op, x, rtolT, rtol, out))
}

// cutoff checks the rtol input and returns the default rtol.
func cutoff(op *opcore.Op, x, rtolT *tensor.Tensor, rtol *float64) (float64, error) {
	shape := x.Shape()
	r := len(shape)
	def := float64(max(shape[r-2], shape[r-1])) * epsOf(x.Dtype().Real())
	if rtol != nil {
		def = *rtol
	}
	if rtolT == nil {
		return def, nil
	}
	if rtol != nil {
		return 0, op.Errorf("rtol given both as an attribute and as an input")
	}
	if !opcore.IsFloat(rtolT.Dtype()) {
		return 0, op.Errorf("rtol is %v: want a float dtype", rtolT.Dtype())
	}
	if err := op.RequireDtypes(rtolT.Dtype()); err != nil {
		return 0, err
	}
	if rtolT.Len() != 1 && !slices.Equal(rtolT.Shape(), shape[:r-2]) {
		return 0, op.Errorf("rtol of shape %v: want the stack's shape %v or one element", rtolT.Shape(), shape[:r-2])
	}
	return def, nil
}

func pinv(op *opcore.Op, x, rtolT *tensor.Tensor, rtol *float64, out *tensor.Tensor) error {
	if err := checkMatrices(op, x, false); err != nil {
		return err
	}
	def, err := cutoff(op, x, rtolT, rtol)
	if err != nil {
		return err
	}
	shape := x.Shape()
	r := len(shape)
	batch := slices.Clone(shape[:r-2])
	M0, N0 := shape[r-2], shape[r-1]
	dt := x.Dtype()
	if opcore.Numel(shape) == 0 {
		y, err := op.Output(out, dt, append(batch, N0, M0))
		if err != nil {
			return err
		}
		if err := op.NoAlias(); err != nil {
			return err
		}
		if y.Len() == 0 {
			return nil
		}
		return op.Zeros(y)
	}
	w, err := jacobi(op, x, true, false)
	if err != nil {
		return err
	}
	B, N := w.B, w.N
	d, err := op.Temp(w.acc, []int{B * N})
	if err != nil {
		return err
	}
	if err := linRun(op, rankGLSL(w.acc, rtolType(rtolT), false), rankTensors(w, rtolT, d, false), B, uint32(B), uint32(N), rtolLen(rtolT), float32(def)); err != nil {
		return err
	}
	// Not transposed: pinv = (V D) Wᴴ, Z[i][r] = V_ir d_r, then Z times
	// W stored as rows (conjugated for complex). Transposed (the work is
	// xᴴ): pinv = (W D) Vᴴ.
	var z, rhs *tensor.Tensor
	if !w.trans {
		z, rhs = w.V, w.W
	} else {
		z, rhs = w.W, w.V
	}
	if w.el.cx {
		if err := linRun(op, linConjGLSL(rhs.Dtype()), []*tensor.Tensor{rhs}, rhs.Len(), uint32(rhs.Len())); err != nil {
			return err
		}
	}
	zr := z.Shape()[len(z.Shape())-1] // the rows of Z: the vectors' length
	zs, err := op.Temp(w.el.dt(), append(slices.Clone(batch), zr, N))
	if err != nil {
		return err
	}
	if err := linRun(op, pinvScaleGLSL(w.el), []*tensor.Tensor{z, d, zs}, B*zr*N, uint32(B), uint32(zr), uint32(N)); err != nil {
		return err
	}
	if dt == w.el.dt() {
		return op.MatMul(zs, rhs, out, opcore.Tiles{})
	}
	// float16: the product in float32, then rounded into the output.
	prod, err := op.Temp(w.acc, append(slices.Clone(batch), N0, M0))
	if err != nil {
		return err
	}
	if err := matmulTemp(op, zs, rhs, prod); err != nil {
		return err
	}
	y, err := op.Output(out, dt, append(batch, N0, M0))
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	return linRun(op, linCastGLSL(w.acc, dt), []*tensor.Tensor{prod, y}, y.Len(), uint32(y.Len()))
}

func matrixRank(op *opcore.Op, x, rtolT *tensor.Tensor, rtol *float64, out *tensor.Tensor) error {
	if err := checkMatrices(op, x, false); err != nil {
		return err
	}
	def, err := cutoff(op, x, rtolT, rtol)
	if err != nil {
		return err
	}
	shape := x.Shape()
	y, err := op.Output(out, tensor.Int64, slices.Clone(shape[:len(shape)-2]))
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	if err := op.RequireDtypes(tensor.Int64); err != nil {
		return err
	}
	if y.Len() == 0 {
		return nil
	}
	if opcore.Numel(shape) == 0 {
		return op.Zeros(y)
	}
	w, err := jacobi(op, x, false, false)
	if err != nil {
		return err
	}
	return linRun(op, rankGLSL(w.acc, rtolType(rtolT), true), rankTensors(w, rtolT, y, true), w.B, uint32(w.B), uint32(w.N), rtolLen(rtolT), float32(def))
}

func rtolType(t *tensor.Tensor) tensor.Dtype {
	if t == nil {
		return 0
	}
	return t.Dtype()
}

func rtolLen(t *tensor.Tensor) uint32 {
	if t == nil {
		return 0
	}
	return uint32(t.Len())
}

// rankTensors are rankGLSL's bindings (count: without the scale).
func rankTensors(w *svdWork, rtolT, y *tensor.Tensor, count bool) []*tensor.Tensor {
	ts := []*tensor.Tensor{w.s, w.perm}
	if !count {
		ts = append(ts, w.scale)
	}
	if rtolT != nil {
		ts = append(ts, rtolT)
	}
	return append(ts, y)
}

// rankGLSL: per matrix, the cutoff rtol·σ_max and, for count, the number
// of σ above it (int64 y[b]); else d[b][j] = 1/(σ_j² scale) above it,
// 0 below. Bindings: s, perm, [scale (not count),] [rtol,] y. Push: B, N,
// rtol count, the rtol without a tensor.
func rankGLSL(acc, rdt tensor.Dtype, count bool) string {
	var b strings.Builder
	dts := []tensor.Dtype{acc, tensor.Int64}
	if rdt != 0 {
		dts = append(dts, rdt)
	}
	linHead(&b, opcore.LocalSize, dts...)
	a := opcore.GLSLType(acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s s[]; };
layout(std430, binding = 1) readonly buffer B1 { uint perm[]; };
`, a)
	o := 2
	if !count {
		fmt.Fprintf(&b, "layout(std430, binding = 2) readonly buffer B2 { %s scale[]; };\n", a)
		o = 3
	}
	rt := a + "(p.rdef)"
	if rdt != 0 {
		fmt.Fprintf(&b, "layout(std430, binding = %d) readonly buffer BR { %s rt[]; };\n", o, opcore.GLSLType(rdt))
		o++
		rt = fmt.Sprintf("%s(rt[p.nr == 1u ? 0u : b])", a)
	}
	if count {
		fmt.Fprintf(&b, "layout(std430, binding = %d) writeonly buffer BO { int64_t y[]; };\n", o)
	} else {
		fmt.Fprintf(&b, "layout(std430, binding = %d) writeonly buffer BO { %s y[]; };\n", o, a)
	}
	fmt.Fprintf(&b, `layout(push_constant) uniform P { uint B; uint N; uint nr; float rdef; } p;
void main() {
	uint b = gid();
	if (b >= p.B) return;
	uint base = b * p.N;
	%[1]s cut = %[2]s * s[base + perm[base]];
	uint n = 0u;
	for (uint j = 0u; j < p.N; j++) {
		%[1]s v = s[base + j];
`, a, rt)
	if count {
		b.WriteString("\t\tif (v > cut) n++;\n\t}\n\ty[b] = int64_t(n);\n}\n")
	} else {
		fmt.Fprintf(&b, "\t\ty[base + j] = v > cut ? %[1]s(1) / (v * v * scale[b]) : %[1]s(0);\n\t}\n}\n", a)
	}
	return b.String()
}

// pinvScaleGLSL: Z[b][i][r] = src[b][r][i] * d[b][r] (the vectors of src
// as Z's columns, scaled by real d). Bindings: src, d, Z. Push: B, rows,
// N.
func pinvScaleGLSL(el linEl) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, el.acc)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[2]s src[]; };
layout(std430, binding = 1) readonly buffer B1 { %[1]s d[]; };
layout(std430, binding = 2) writeonly buffer B2 { %[2]s z[]; };
layout(push_constant) uniform P { uint B; uint rows; uint N; } p;
void main() {
	uint e = gid();
	uint mat = p.rows * p.N;
	if (e >= p.B * mat) return;
	uint b = e / mat, rem = e %% mat, i = rem / p.N, r = rem %% p.N;
	z[e] = src[(b * p.N + r) * p.rows + i] * d[b * p.N + r];
}
`, el.r(), el.t())
	return b.String()
}

// linCastGLSL: y = x in y's dtype. Push: n.
func linCastGLSL(from, to tensor.Dtype) string {
	var b strings.Builder
	linHead(&b, opcore.LocalSize, from, to)
	fmt.Fprintf(&b, `layout(std430, binding = 0) readonly buffer B0 { %[1]s x[]; };
layout(std430, binding = 1) writeonly buffer B1 { %[2]s y[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
	uint e = gid();
	if (e < p.n) y[e] = %[2]s(x[e]);
}
`, opcore.GLSLType(from), opcore.GLSLType(to))
	return b.String()
}

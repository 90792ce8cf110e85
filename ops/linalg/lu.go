package linalg

import (
	"fmt"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// LU factorization with partial pivoting, and what is built on it:
// solve, inv, det and slogdet.

func init() {
	opcore.DefSchema("1", 1, nil, "inv", "det")
	opcore.DefSchema("1", 2, nil, "slogdet")
	opcore.DefSchema("2", 1, nil, "solve")
	opcore.Builtin("solve", func(o opcore.Owner, in, out []*tensor.Tensor, _ opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("solve", in, 2); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("solve", out, 1); err != nil {
			return nil, err
		}
		return Solve(o, in[0], in[1], opcore.OutAt(out, 0))
	})
	opcore.Builtin("inv", func(o opcore.Owner, in, out []*tensor.Tensor, _ opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("inv", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("inv", out, 1); err != nil {
			return nil, err
		}
		return Inv(o, in[0], opcore.OutAt(out, 0))
	})
	opcore.Builtin("det", func(o opcore.Owner, in, out []*tensor.Tensor, _ opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("det", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("det", out, 1); err != nil {
			return nil, err
		}
		return Det(o, in[0], opcore.OutAt(out, 0))
	})
	opcore.Builtin("slogdet", func(o opcore.Owner, in, out []*tensor.Tensor, _ opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("slogdet", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("slogdet", out, 2); err != nil {
			return nil, err
		}
		return Slogdet(o, in[0], opcore.OutAt(out, 0), opcore.OutAt(out, 1))
	})
}

// luFactors is the LU factorization of a stack of nb n×n matrices: lu
// holds L (unit lower, below the diagonal) and U; piv holds, per matrix,
// n+1 uints: perm[i], the row of the input that is row i of P·A, then the
// parity of the row swaps.
type luFactors struct {
	lu, piv *tensor.Tensor
	batch   []int
	nb, n   int
}

// lu adds the dispatches that factor x (a stack of square float32,
// float64, complex64 or complex128 matrices; the pivot is the entry of
// largest modulus) into scratch tensors.
func lu(op *opcore.Op, x *tensor.Tensor) (*luFactors, error) {
	dt := x.Dtype()
	batch, n, err := square(op, "x", x)
	if err != nil {
		return nil, err
	}
	f := &luFactors{batch: batch, nb: opcore.Numel(batch), n: n}
	if f.lu, err = op.Temp(dt, []int{max(1, f.nb*n*n)}); err != nil {
		return nil, err
	}
	if f.piv, err = op.Temp(tensor.Uint32, []int{max(1, f.nb*(n+1))}); err != nil {
		return nil, err
	}
	if f.nb == 0 {
		return f, nil
	}
	t, rt := opcore.GLSLType(dt), opcore.GLSLType(dt.Real())
	init := opcore.Header(dt) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer X { %[2]s x[]; };
layout(std430, binding = 1) writeonly buffer A { %[2]s a[]; };
layout(std430, binding = 2) writeonly buffer V { uint piv[]; };
layout(push_constant) uniform P { uint total; uint n, nb; } p;
%[3]svoid main() {
	uint e = gid();
	if (e >= p.total) {
		return;
	}
	if (e < p.nb * p.n * p.n) {
		a[e] = x[e];
	}
	if (e < p.nb * (p.n + 1u)) {
		uint r = e %% (p.n + 1u);
		piv[e] = r == p.n ? 0u : r;
	}
}
`, opcore.LocalSize, t, opcore.IndexGLSL)
	src := x
	if n == 0 {
		src = f.lu // x is empty: bind something else
	}
	if err := elemGrid(op, init, []*tensor.Tensor{src, f.lu, f.piv}, max(f.nb*n*n, f.nb*(n+1)), uint32(n), uint32(f.nb)); err != nil {
		return nil, err
	}
	sk := &stepKernel{
		dt:   dt,
		push: "uint n;",
		decls: fmt.Sprintf(`layout(std430, binding = 0) coherent buffer A { %[1]s a[]; };
layout(std430, binding = 1) coherent buffer V { uint piv[]; };
shared %[2]s sv[WG];
shared uint si[WG];
%[3]s`, t, rt, laScalarGLSL(dt)),
		// The pivot is the first row of largest magnitude (NaNs are never
		// chosen); the swap moves whole rows, LAPACK's getrf storage; a zero
		// pivot (a singular matrix) leaves its column unscaled.
		panel: fmt.Sprintf(`	uint n = p.n, base = b * n * n;
	%[3]s best = %[3]s(-1);
	uint bi = k;
	for (uint i = k + tid; i < n; i += WG) {
		%[3]s v = laAbs(a[base + i * n + k]);
		if (v > best) {
			best = v;
			bi = i;
		}
	}
	sv[tid] = best;
	si[tid] = bi;
%[2]s	uint pr = si[0];
	if (pr != k) {
		for (uint j = tid; j < n; j += WG) {
			%[1]s t = a[base + k * n + j];
			a[base + k * n + j] = a[base + pr * n + j];
			a[base + pr * n + j] = t;
		}
		if (tid == 0u) {
			uint pb = b * (n + 1u);
			uint t = piv[pb + k];
			piv[pb + k] = piv[pb + pr];
			piv[pb + pr] = t;
			piv[pb + n] ^= 1u;
		}
	}
	memoryBarrierBuffer();
	barrier();
	%[1]s d = a[base + k * n + k];
	if (d != %[1]s(0)) {
		for (uint i = k + 1u + tid; i < n; i += WG) {
			a[base + i * n + k] = laDiv(a[base + i * n + k], d);
		}
	}`, t, treeGLSL("if (sv[tid + s] > sv[tid] || (sv[tid + s] == sv[tid] && si[tid + s] < si[tid])) { sv[tid] = sv[tid + s]; si[tid] = si[tid + s]; }"), rt),
		update: `	uint n = p.n, base = b * n * n, m = n - k - 1u;
	uint i = k + 1u + e / m, j = k + 1u + e % m;
	a[base + i * n + j] -= laMul(a[base + i * n + k], a[base + k * n + j]);`,
		stepK: "s", count: "(p.n - k - 1u) * (p.n - k - 1u)",
		steps: n,
		hostK: func(s int) int { return s }, hostCount: func(k int) int { return (n - k - 1) * (n - k - 1) },
		panelCost:  func(k int) int { return 2*linCeil(n, linWG) + linCeil(n-k, linWG) },
		updateCost: func(int) int { return 1 },
	}
	return f, runSteps(op, sk, f.nb, []*tensor.Tensor{f.lu, f.piv}, uint32(n))
}

// luSolve adds the dispatches that solve A·X = B for X, out, of shape
// [batch..., n, k] (contiguous: batchOut matrices), by the factors f of
// A: P·B (B, of batch shape bBatch, broadcast; b nil: the identity), then
// forward substitution with L and backward with U. A's batch broadcasts
// against batchOut too.
func luSolve(op *opcore.Op, f *luFactors, b *tensor.Tensor, bBatch []int, out *tensor.Tensor, batchOut []int, k int) error {
	nbo, n := opcore.Numel(batchOut), f.n
	if nbo == 0 || n == 0 || k == 0 {
		return nil
	}
	dt := out.Dtype()
	t := opcore.GLSLType(dt)
	ad, as := batchMap(f.batch, batchOut)
	var bd, bs []int
	if b != nil {
		bd, bs = batchMap(bBatch, batchOut)
	}
	if 3+2*len(ad)+2*len(bd) > 32 {
		return op.Errorf("batch shapes %v and %v need too many dimensions after merging", f.batch, bBatch)
	}
	src := "(src == c ? " + laOne(dt) + " : " + t + "(0))"
	bdecl := ""
	ts := []*tensor.Tensor{f.piv, out}
	if b != nil {
		src = "bb[bmap(bo) * p.n * p.k + src * p.k + c]"
		bdecl = fmt.Sprintf("layout(std430, binding = 2) readonly buffer B { %s bb[]; };\n", t)
		ts = append(ts, b)
	}
	init := opcore.Header(dt) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer V { uint piv[]; };
layout(std430, binding = 1) writeonly buffer X { %s x[]; };
%slayout(push_constant) uniform P { uint total; uint n, k;%s%s } p;
%s%s%svoid main() {
	uint e = gid();
	if (e >= p.total) {
		return;
	}
	uint c = e %% p.k, i = (e / p.k) %% p.n, bo = e / (p.k * p.n);
	uint src = piv[amap(bo) * (p.n + 1u) + i];
	x[e] = %s;
}
`, opcore.LocalSize, t, bdecl, mapPush("amap", len(ad)), mapPush("bmap", len(bd)), opcore.IndexGLSL, mapGLSL("amap", len(ad)), condGLSL(b != nil, mapGLSL("bmap", len(bd))), src)
	push := append([]any{uint32(n), uint32(k)}, mapVals(ad, as)...)
	push = append(push, mapVals(bd, bs)...)
	if err := elemGrid(op, init, ts, nbo*n*k, push...); err != nil {
		return err
	}
	decls := fmt.Sprintf(`layout(std430, binding = 0) readonly buffer A { %s a[]; };
layout(std430, binding = 1) coherent buffer X { %s x[]; };
%s%s`, t, t, mapGLSL("amap", len(ad)), laScalarGLSL(dt))
	pushDecl := "uint n, k;" + mapPush("amap", len(ad))
	fwd := &stepKernel{
		dt: dt, push: pushDecl, decls: decls,
		update: `	uint n = p.n, kk = p.k, i = k + 1u + e / kk, c = e % kk;
	uint xb = b * n * kk, ab = amap(b) * n * n;
	x[xb + i * kk + c] -= laMul(a[ab + i * n + k], x[xb + k * kk + c]);`,
		stepK: "s", count: "(p.n - k - 1u) * p.k",
		steps: n,
		hostK: func(s int) int { return s }, hostCount: func(kk int) int { return (n - kk - 1) * k },
		panelCost: func(int) int { return 0 }, updateCost: func(int) int { return 1 },
	}
	bwd := &stepKernel{
		dt: dt, push: pushDecl, decls: decls,
		panel: `	uint n = p.n, kk = p.k, xb = b * n * kk, ab = amap(b) * n * n;
	for (uint c = tid; c < kk; c += WG) {
		x[xb + k * kk + c] = laDiv(x[xb + k * kk + c], a[ab + k * n + k]);
	}`,
		update: `	uint n = p.n, kk = p.k, i = e / kk, c = e % kk;
	uint xb = b * n * kk, ab = amap(b) * n * n;
	x[xb + i * kk + c] -= laMul(a[ab + i * n + k], x[xb + k * kk + c]);`,
		stepK: "p.n - 1u - s", count: "k * p.k",
		steps: n,
		hostK: func(s int) int { return n - 1 - s }, hostCount: func(kk int) int { return kk * k },
		panelCost: func(int) int { return linCeil(k, linWG) }, updateCost: func(int) int { return 1 },
	}
	vals := append([]any{uint32(n), uint32(k)}, mapVals(ad, as)...)
	ts = []*tensor.Tensor{f.lu, out}
	if err := runSteps(op, fwd, nbo, ts, vals...); err != nil {
		return err
	}
	return runSteps(op, bwd, nbo, ts, vals...)
}

func condGLSL(c bool, s string) string {
	if c {
		return s
	}
	return ""
}

// Solve prepares the solution x of a·x = b ("solve"), for a stack of
// square matrices a [..., n, n] and b [..., n, k] (the batch dimensions
// broadcast), or b [n], a vector (the array API standard's 2023.12 rule:
// only a 1-D b is a vector), which gives x [..., n]. float32, float64,
// complex64 and complex128; a and b of one dtype.
//
// It factors a by LU with partial pivoting (one workgroup per matrix; the
// steps of large matrices over several dispatches) and substitutes. A
// singular matrix is no error: its x holds Inf or NaN (NumPy raises
// LinAlgError). out must not share memory with a or b.
func Solve(o opcore.Owner, a, b, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "solve", a, b)
	if err != nil {
		return nil, err
	}
	dt := a.Dtype()
	if err := linFloat(op, dt); err != nil {
		return op.Fail(err)
	}
	if b.Dtype() != dt {
		return op.Fail(op.Errorf("mismatched dtypes: a is %v, b is %v", dt, b.Dtype()))
	}
	aBatch, n, err := square(op, "a", a)
	if err != nil {
		return op.Fail(err)
	}
	bs := b.Shape()
	vector := len(bs) == 1
	var bBatch []int
	k := 1
	switch {
	case vector:
		if bs[0] != n {
			return op.Fail(op.Errorf("b has shape %v, a %v: b's length must be n = %d", bs, a.Shape(), n))
		}
	case len(bs) < 2:
		return op.Fail(op.Errorf("b is 0-d: want [n] or [..., n, k]"))
	default:
		if bs[len(bs)-2] != n {
			return op.Fail(op.Errorf("b has shape %v, a %v: b's rows must be n = %d", bs, a.Shape(), n))
		}
		bBatch, k = bs[:len(bs)-2], bs[len(bs)-1]
	}
	batch, err := opcore.BroadcastShapes("solve", aBatch, bBatch)
	if err != nil {
		return op.Fail(err)
	}
	shape := append(append([]int(nil), batch...), n)
	if !vector {
		shape = append(shape, k)
	}
	x, err := op.OutputNoAlias(out, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	if opcore.Numel(shape) == 0 {
		return op, nil
	}
	f, err := lu(op, a)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(luSolve(op, f, b, bBatch, x, batch, k))
}

// Inv prepares the inverse of each square matrix of x [..., n, n]
// ("inv"): float32, float64, complex64 and complex128. It solves x·y = I by LU with partial
// pivoting; a singular matrix gives Inf or NaN entries, not an error
// (NumPy raises LinAlgError). out must not share memory with x.
func Inv(o opcore.Owner, x, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "inv", x)
	if err != nil {
		return nil, err
	}
	if err := linFloat(op, x.Dtype()); err != nil {
		return op.Fail(err)
	}
	batch, n, err := square(op, "x", x)
	if err != nil {
		return op.Fail(err)
	}
	y, err := op.OutputNoAlias(out, x.Dtype(), x.Shape())
	if err != nil {
		return op.Fail(err)
	}
	if opcore.Numel(batch) == 0 || n == 0 {
		return op, nil
	}
	f, err := lu(op, x)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(luSolve(op, f, nil, nil, y, batch, n))
}

// Det prepares the determinant of each square matrix of x [..., n, n]
// ("det"), shape [...]: float32, float64, complex64 and complex128. It
// is the product of U's
// diagonal of the LU factorization with partial pivoting, signed by the
// permutation; a singular matrix gives 0 (or a tiny number, as LAPACK's);
// an empty matrix 1.
func Det(o opcore.Owner, x, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "det", x)
	if err != nil {
		return nil, err
	}
	return op.Done(detOp(op, x, false, out, nil))
}

// Slogdet prepares the sign and the natural logarithm of the absolute
// value of the determinant of each square matrix of x [..., n, n]
// ("slogdet": two outputs, shape [...] each, x's dtype). A singular
// matrix gives sign 0 and logabsdet -Inf, as NumPy; an empty matrix 1 and
// 0. float32, float64, complex64 and complex128: for complex dtypes the
// sign is a unit complex number (the product of the pivots' v/|v|, times
// the permutation's sign) and logabsdet has the real dtype (float32 for
// complex64), as NumPy's.
func Slogdet(o opcore.Owner, x, sign, logabs *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "slogdet", x)
	if err != nil {
		return nil, err
	}
	return op.Done(detOp(op, x, true, sign, logabs))
}

func detOp(op *opcore.Op, x *tensor.Tensor, slog bool, out, out2 *tensor.Tensor) error {
	dt := x.Dtype()
	if err := linFloat(op, dt); err != nil {
		return err
	}
	batch, n, err := square(op, "x", x)
	if err != nil {
		return err
	}
	y, err := op.Output(out, dt, batch)
	if err != nil {
		return err
	}
	ts := []*tensor.Tensor{nil, nil, y}
	if slog {
		y2, err := op.Output(out2, dt.Real(), batch)
		if err != nil {
			return err
		}
		ts = append(ts, y2)
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	nb := opcore.Numel(batch)
	if nb == 0 {
		return nil
	}
	if n > 60000 {
		return op.Errorf("matrices of %d rows: at most 60000", n)
	}
	f, err := lu(op, x)
	if err != nil {
		return err
	}
	ts[0], ts[1] = f.lu, f.piv
	t, rt := opcore.GLSLType(dt), opcore.GLSLType(dt.Real())
	math := laScalarGLSL(dt)
	var body, decl string
	// The sign: the parity of the row swaps times the product of the
	// pivots' signs, v/|v| (a unit complex number for complex dtypes,
	// normalized once more at the end against rounding drift).
	if slog {
		logf := "log"
		negInf := "uintBitsToFloat(0xff800000u)"
		if dt.Real() == tensor.Float64 {
			logf, negInf, math = "logD", "packDouble2x32(uvec2(0u, 0xfff00000u))", opcore.MathF64+math
		}
		decl = fmt.Sprintf("layout(std430, binding = 2) writeonly buffer S { %s sg[]; };\nlayout(std430, binding = 3) writeonly buffer L { %s la[]; };\n", t, rt)
		body = fmt.Sprintf(`	%[1]s s = (piv[b * (n + 1u) + n] & 1u) != 0u ? -%[5]s : %[5]s;
	%[4]s l = %[4]s(0);
	bool zero = false;
	for (uint i = 0u; i < n; i++) {
		%[1]s v = a[b * n * n + i * n + i];
		if (v == %[1]s(0)) {
			zero = true;
		} else {
			%[4]s m = laAbs(v);
			s = laMul(s, laDiv(v, laFromRe(m)));
			l += %[2]s(m);
		}
	}
	if (zero) {
		s = %[1]s(0);
		l = %[3]s;
	} else {
		s = laDiv(s, laFromRe(laAbs(s)));
	}
	sg[b] = s;
	la[b] = l;`, t, logf, negInf, rt, laOne(dt))
	} else {
		decl = fmt.Sprintf("layout(std430, binding = 2) writeonly buffer D { %s d[]; };\n", t)
		body = fmt.Sprintf(`	%[1]s r = (piv[b * (n + 1u) + n] & 1u) != 0u ? -%[2]s : %[2]s;
	for (uint i = 0u; i < n; i++) {
		r = laMul(r, a[b * n * n + i * n + i]);
	}
	d[b] = r;`, t, laOne(dt))
	}
	src := opcore.Header(dt) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer A { %s a[]; };
layout(std430, binding = 1) readonly buffer V { uint piv[]; };
%slayout(push_constant) uniform P { uint total; uint n; } p;
%s%svoid main() {
	uint b = gid();
	if (b >= p.total) {
		return;
	}
	uint n = p.n;
%s
}
`, opcore.LocalSize, t, decl, opcore.IndexGLSL, math, body)
	return elemGrid(op, src, ts, nb, uint32(n))
}

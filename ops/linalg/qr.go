package linalg

import (
	"fmt"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	opcore.DefSchema("1", 2, []string{"mode"}, "qr")
	opcore.Builtin("qr", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("qr", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("qr", out, 2); err != nil {
			return nil, err
		}
		return QR(o, in[0], at.Mode, opcore.OutAt(out, 0), opcore.OutAt(out, 1))
	})
}

// QR prepares the QR factorization of each matrix of x [..., m, n] ("qr":
// two outputs, Q then R; Attrs.Mode): x = Q·R with Q's columns
// orthonormal and R upper triangular. mode "reduced" (or "") gives Q [...,
// m, k] and R [..., k, n] with k = min(m, n); "complete" gives Q [..., m,
// m] and R [..., m, n]. float32, float64, complex64 and complex128 (Q
// unitary).
//
// Householder reflections as LAPACK's geqrf: step j reflects column j's
// entries from row j onto beta·e1 with beta = -sign(x_jj)·‖x_j:‖ (so R's
// diagonal may be negative, as NumPy's), then applies the reflection to
// the columns right of it (for complex dtypes larfg's H = I - tau·v·vᴴ
// with beta real, so R's diagonal is real as zgeqrf's, and the columns
// get Hᴴ); Q is the product of the reflections, applied
// to the identity's columns last to first. The norm is not rescaled, so
// columns whose squared norm overflows (entries past about 1e19 in
// float32) give Inf or NaN. One workgroup per matrix, or several
// dispatches per step for large ones; an invocation applies a reflection
// to a whole column, so m is at most about 14000. Q and R must not share
// memory with x.
func QR(o opcore.Owner, x *tensor.Tensor, mode string, qOut, rOut *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "qr", x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	if err := linFloat(op, dt); err != nil {
		return op.Fail(err)
	}
	s := x.Shape()
	if len(s) < 2 {
		return op.Fail(op.Errorf("x has shape %v: want a matrix or a stack of them (..., m, n)", s))
	}
	batch, m, n := s[:len(s)-2], s[len(s)-2], s[len(s)-1]
	kk := min(m, n)
	qc, rr := kk, kk
	switch mode {
	case "", "reduced":
	case "complete":
		qc, rr = m, m
	default:
		return op.Fail(op.Errorf("mode %q: use \"reduced\" or \"complete\"", mode))
	}
	q, err := op.Output(qOut, dt, append(append([]int(nil), batch...), m, qc))
	if err != nil {
		return op.Fail(err)
	}
	r, err := op.OutputNoAlias(rOut, dt, append(append([]int(nil), batch...), rr, n))
	if err != nil {
		return op.Fail(err)
	}
	if q.Allocation() == r.Allocation() {
		return op.Fail(op.Errorf("Q and R are the same tensor"))
	}
	nb := opcore.Numel(batch)
	if nb == 0 || m == 0 {
		return op, nil
	}
	t, rt := opcore.GLSLType(dt), opcore.GLSLType(dt.Real())
	head := opcore.Header(dt) + fmt.Sprintf("layout(local_size_x = %d) in;\n", opcore.LocalSize)
	// w is the working copy: R above the diagonal, the reflections'
	// vectors below it (their first entry, 1, implied); tau their factors.
	var w, tau *tensor.Tensor
	if n > 0 {
		if w, err = op.Temp(dt, []int{nb * m * n}); err != nil {
			return op.Fail(err)
		}
		if tau, err = op.Temp(dt, []int{max(1, nb*kk)}); err != nil {
			return op.Fail(err)
		}
		cp := head + fmt.Sprintf(`layout(std430, binding = 0) readonly buffer X { %[1]s x[]; };
layout(std430, binding = 1) writeonly buffer W { %[1]s w[]; };
layout(push_constant) uniform P { uint total; } p;
%[2]svoid main() {
	uint e = gid();
	if (e < p.total) {
		w[e] = x[e];
	}
}
`, t, opcore.IndexGLSL)
		if err := elemGrid(op, cp, []*tensor.Tensor{x, w}, nb*m*n); err != nil {
			return op.Fail(err)
		}
		sk := &stepKernel{
			dt:   dt,
			push: "uint m, n, kk;",
			decls: fmt.Sprintf(`layout(std430, binding = 0) coherent buffer W { %[1]s w[]; };
layout(std430, binding = 1) coherent buffer T { %[1]s tau[]; };
shared %[2]s sv[WG];
%[3]s`, t, rt, laScalarGLSL(dt)),
			// LAPACK's larfg: H = I - tau·v·vᴴ with v's first entry 1
			// and beta real (so R's diagonal is real, negative where the
			// pivot's real part is positive); tau is 0 (H = I) only where
			// the column below is zero and the pivot is real.
			panel: fmt.Sprintf(`	uint m = p.m, n = p.n, base = b * m * n;
	%[2]s s2 = %[2]s(0);
	for (uint i = k + 1u + tid; i < m; i += WG) {
		%[1]s v = w[base + i * n + k];
		s2 += laRe(laMul(laConj(v), v));
	}
	sv[tid] = s2;
	%[1]s alpha = w[base + k * n + k];
%[3]s	s2 = sv[0];
	%[1]s ta = %[1]s(0);
	if (s2 != %[2]s(0) || laHasIm(alpha)) {
		%[2]s nrm = sqrt(laRe(laMul(laConj(alpha), alpha)) + s2);
		%[2]s beta = laRe(alpha) >= %[2]s(0) ? -nrm : nrm;
		%[1]s v0 = alpha - laFromRe(beta);
		ta = laDiv(laFromRe(beta) - alpha, laFromRe(beta));
		for (uint i = k + 1u + tid; i < m; i += WG) {
			w[base + i * n + k] = laDiv(w[base + i * n + k], v0);
		}
		if (tid == 0u) {
			w[base + k * n + k] = laFromRe(beta);
		}
	}
	if (tid == 0u) {
		tau[b * p.kk + k] = ta;
	}`, t, rt, treeGLSL("sv[tid] += sv[tid + s];")),
			// Column j gets Hᴴ = I - conj(tau)·v·vᴴ.
			update: fmt.Sprintf(`	uint m = p.m, n = p.n, base = b * m * n, j = k + 1u + e;
	%[1]s ta = tau[b * p.kk + k];
	if (ta == %[1]s(0)) {
		return;
	}
	%[1]s d = w[base + k * n + j];
	for (uint i = k + 1u; i < m; i++) {
		d += laMul(laConj(w[base + i * n + k]), w[base + i * n + j]);
	}
	d = laMul(laConj(ta), d);
	w[base + k * n + j] -= d;
	for (uint i = k + 1u; i < m; i++) {
		w[base + i * n + j] -= laMul(w[base + i * n + k], d);
	}`, t),
			stepK: "s", count: "p.n - k - 1u",
			steps: kk,
			hostK: func(s int) int { return s }, hostCount: func(k int) int { return n - k - 1 },
			panelCost:  func(k int) int { return 2*linCeil(m-k, linWG) + 2 },
			updateCost: func(k int) int { return 2*(m-k) + 1 },
		}
		if err := runSteps(op, sk, nb, []*tensor.Tensor{w, tau}, uint32(m), uint32(n), uint32(kk)); err != nil {
			return op.Fail(err)
		}
	}
	// R: w's upper triangle.
	if n > 0 {
		fin := head + fmt.Sprintf(`layout(std430, binding = 0) readonly buffer W { %[1]s w[]; };
layout(std430, binding = 1) writeonly buffer R { %[1]s r[]; };
layout(push_constant) uniform P { uint total; uint m, n, rr; } p;
%[2]svoid main() {
	uint e = gid();
	if (e >= p.total) {
		return;
	}
	uint j = e %% p.n, i = (e / p.n) %% p.rr, b = e / (p.n * p.rr);
	r[e] = i <= j && i < p.m ? w[(b * p.m + i) * p.n + j] : %[1]s(0);
}
`, t, opcore.IndexGLSL)
		if err := elemGrid(op, fin, []*tensor.Tensor{w, r}, nb*rr*n, uint32(m), uint32(n), uint32(rr)); err != nil {
			return op.Fail(err)
		}
	}
	// Q: the identity's first qc columns, then the reflections last to
	// first; reflection k leaves columns left of k alone (they are zero
	// in rows k and below).
	eye := head + fmt.Sprintf(`layout(std430, binding = 0) writeonly buffer Q { %[1]s q[]; };
layout(push_constant) uniform P { uint total; uint qc, m; } p;
%[2]svoid main() {
	uint e = gid();
	if (e >= p.total) {
		return;
	}
	uint j = e %% p.qc, i = (e / p.qc) %% p.m;
	q[e] = i == j ? %[3]s : %[1]s(0);
}
`, t, opcore.IndexGLSL, laOne(dt))
	if err := elemGrid(op, eye, []*tensor.Tensor{q}, nb*m*qc, uint32(qc), uint32(m)); err != nil {
		return op.Fail(err)
	}
	if kk == 0 {
		return op, nil
	}
	sq := &stepKernel{
		dt:   dt,
		push: "uint m, n, kk, qc;",
		decls: fmt.Sprintf(`layout(std430, binding = 0) readonly buffer W { %[1]s w[]; };
layout(std430, binding = 1) readonly buffer T { %[1]s tau[]; };
layout(std430, binding = 2) coherent buffer Q { %[1]s q[]; };
%[2]s`, t, laScalarGLSL(dt)),
		// Column j gets H = I - tau·v·vᴴ.
		update: fmt.Sprintf(`	uint m = p.m, n = p.n, qc = p.qc, wb = b * m * n, qb = b * m * qc, j = k + e;
	%[1]s ta = tau[b * p.kk + k];
	if (ta == %[1]s(0)) {
		return;
	}
	%[1]s d = q[qb + k * qc + j];
	for (uint i = k + 1u; i < m; i++) {
		d += laMul(laConj(w[wb + i * n + k]), q[qb + i * qc + j]);
	}
	d = laMul(ta, d);
	q[qb + k * qc + j] -= d;
	for (uint i = k + 1u; i < m; i++) {
		q[qb + i * qc + j] -= laMul(w[wb + i * n + k], d);
	}`, t),
		stepK: "p.kk - 1u - s", count: "p.qc - k",
		steps: kk,
		hostK: func(s int) int { return kk - 1 - s }, hostCount: func(k int) int { return qc - k },
		panelCost:  func(int) int { return 0 },
		updateCost: func(k int) int { return 2*(m-k) + 1 },
	}
	return op.Done(runSteps(op, sq, nb, []*tensor.Tensor{w, tau, q}, uint32(m), uint32(n), uint32(kk), uint32(qc)))
}

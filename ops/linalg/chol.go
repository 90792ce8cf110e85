package linalg

import (
	"fmt"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	opcore.DefSchema("1", 1, []string{"upper"}, "cholesky")
	opcore.Builtin("cholesky", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("cholesky", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("cholesky", out, 1); err != nil {
			return nil, err
		}
		return Cholesky(o, in[0], at.Upper, opcore.OutAt(out, 0))
	})
}

// Cholesky prepares the Cholesky factor of each symmetric positive-
// definite matrix of x [..., n, n] ("cholesky"; Attrs.Upper): the lower
// triangular L with x = L·Lᵀ, or, upper, U = Lᵀ with x = Uᵀ·U; the other
// triangle is zero. float32, float64, complex64 and complex128: for a
// complex dtype x is Hermitian, x = L·Lᴴ and upper gives U = Lᴴ. Only the
// lower triangle of x is read, and of its diagonal only the real part (as
// LAPACK's potrf with uplo 'L').
//
// A matrix that is not positive definite (a pivot ≤ 0 or NaN) is no
// error: that matrix's result is NaN throughout, the others are computed
// (NumPy raises LinAlgError; the array API standard leaves it open).
//
// Right-looking: step k takes the square root of the pivot and scales
// column k, then updates the trailing lower triangle; one workgroup per
// matrix, large matrices' steps over several dispatches. out must not
// share memory with x.
func Cholesky(o opcore.Owner, x *tensor.Tensor, upper bool, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "cholesky", x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	if err := linFloat(op, dt); err != nil {
		return op.Fail(err)
	}
	batch, n, err := square(op, "x", x)
	if err != nil {
		return op.Fail(err)
	}
	y, err := op.OutputNoAlias(out, dt, x.Shape())
	if err != nil {
		return op.Fail(err)
	}
	nb := opcore.Numel(batch)
	if nb == 0 || n == 0 {
		return op, nil
	}
	l, err := op.Temp(dt, []int{nb * n * n})
	if err != nil {
		return op.Fail(err)
	}
	flag, err := op.Temp(tensor.Uint32, []int{nb})
	if err != nil {
		return op.Fail(err)
	}
	t, rt := opcore.GLSLType(dt), opcore.GLSLType(dt.Real())
	init := opcore.Header(dt) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer X { %[2]s x[]; };
layout(std430, binding = 1) writeonly buffer L { %[2]s l[]; };
layout(std430, binding = 2) writeonly buffer F { uint flag[]; };
layout(push_constant) uniform P { uint total; uint nb; } p;
%[3]svoid main() {
	uint e = gid();
	if (e >= p.total) {
		return;
	}
	l[e] = x[e];
	if (e < p.nb) {
		flag[e] = 0u;
	}
}
`, opcore.LocalSize, t, opcore.IndexGLSL)
	if err := elemGrid(op, init, []*tensor.Tensor{x, l, flag}, nb*n*n, uint32(nb)); err != nil {
		return op.Fail(err)
	}
	sk := &stepKernel{
		dt:   dt,
		push: "uint n;",
		decls: fmt.Sprintf(`layout(std430, binding = 0) coherent buffer L { %s l[]; };
layout(std430, binding = 1) coherent buffer F { uint flag[]; };
%[2]s`, t, laScalarGLSL(dt)),
		// The pivot is the diagonal's real part (a Hermitian matrix's
		// diagonal is real; its imaginary part is not read, as potrf's).
		panel: fmt.Sprintf(`	uint n = p.n, base = b * n * n;
	%[1]s d = laRe(l[base + k * n + k]);
	if (!(d > %[1]s(0)) && tid == 0u) {
		flag[b] = 1u;
	}
	%[1]s r = sqrt(d);
	for (uint i = k + 1u + tid; i < n; i += WG) {
		l[base + i * n + k] /= r;
	}
	memoryBarrierBuffer();
	barrier();
	if (tid == 0u) {
		l[base + k * n + k] = laFromRe(r);
	}`, rt),
		// L·Lᴴ: the trailing lower triangle loses l[i][k]·conj(l[j][k]).
		update: `	uint n = p.n, base = b * n * n, m = n - k - 1u;
	uint i = k + 1u + e / m, j = k + 1u + e % m;
	if (j <= i) {
		l[base + i * n + j] -= laMul(l[base + i * n + k], laConj(l[base + j * n + k]));
	}`,
		stepK: "s", count: "(p.n - k - 1u) * (p.n - k - 1u)",
		steps: n,
		hostK: func(s int) int { return s }, hostCount: func(k int) int { return (n - k - 1) * (n - k - 1) },
		panelCost:  func(k int) int { return linCeil(n-k, linWG) },
		updateCost: func(int) int { return 1 },
	}
	if err := runSteps(op, sk, nb, []*tensor.Tensor{l, flag}, uint32(n)); err != nil {
		return op.Fail(err)
	}
	// The result: the lower triangle of l (upper: transposed), zeros, or
	// NaN throughout for a matrix that is not positive definite.
	get := "j <= i ? l[e] : " + t + "(0)"
	if upper {
		get = "i <= j ? laConj(l[b * p.n * p.n + j * p.n + i]) : " + t + "(0)"
	}
	fin := opcore.Header(dt) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer L { %[2]s l[]; };
layout(std430, binding = 1) readonly buffer F { uint flag[]; };
layout(std430, binding = 2) writeonly buffer Y { %[2]s y[]; };
layout(push_constant) uniform P { uint total; uint n; } p;
%[3]s%[6]svoid main() {
	uint e = gid();
	if (e >= p.total) {
		return;
	}
	uint j = e %% p.n, i = (e / p.n) %% p.n, b = e / (p.n * p.n);
	y[e] = flag[b] != 0u ? %[4]s : (%[5]s);
}
`, opcore.LocalSize, t, opcore.IndexGLSL, t+"("+nanGLSL(rt)+")", get, laScalarGLSL(dt))
	return op.Done(elemGrid(op, fin, []*tensor.Tensor{l, flag, y}, nb*n*n, uint32(n)))
}

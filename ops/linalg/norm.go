package linalg

import (
	"math"
	"slices"
	"strconv"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	opcore.DefSchema("1", 1, []string{"axes", "keepdims", "ord=2"}, "vector_norm")
	opcore.DefSchema("1", 1, []string{"ord=fro", "keepdims"}, "matrix_norm")
	opcore.Builtin("vector_norm", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("vector_norm", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("vector_norm", out, 1); err != nil {
			return nil, err
		}
		ord := 2.0
		if at.Ord != "" {
			v, err := strconv.ParseFloat(at.Ord, 64)
			if err != nil || math.IsNaN(v) {
				return nil, core.Invalid("ops.vector_norm: ord %q: want a number, inf or -inf", at.Ord)
			}
			ord = v
		}
		return VectorNorm(o, in[0], at.Axes, at.KeepDims, ord, opcore.OutAt(out, 0))
	})
	opcore.Builtin("matrix_norm", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("matrix_norm", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("matrix_norm", out, 1); err != nil {
			return nil, err
		}
		return MatrixNorm(o, in[0], at.Ord, at.KeepDims, opcore.OutAt(out, 0))
	})
}

// VectorNorm computes the ord-norm of x's elements along axes
// ("vector_norm"; Attrs.Axes: nil for all, Attrs.Ord: a number, "inf"
// or "-inf", default 2; Attrs.KeepDims): (sum |x|^ord)^(1/ord); ord inf
// the largest |x|, -inf the smallest, 0 the count of nonzero elements, 1
// the sum of |x|. Other ords scale by the largest |x| (the smallest for
// negative ords) first, so neither |x|^ord nor the sum overflows or
// underflows early: the 2-norm of 1e30s is right in float32. Float16,
// float32, float64, complex64 and complex128 (float16 computes in
// float32; |z| of a complex z is hypot-style, without overflow); the
// result has x's real dtype (float32 for complex64, float64 for
// complex128). Reductions of no elements give 0 for ord >= 0 (and inf) and are
// an error otherwise.
//
// The op is a gather of |x| into rows of the reduced elements, the
// reduction passes of Max/Min/Sum over them (any size), and element-wise
// dispatches for the scaling and the root.
func VectorNorm(o opcore.Owner, x *tensor.Tensor, axes []int, keepDims bool, ord float64, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "vector_norm", x)
	if err != nil {
		return nil, err
	}
	return op.Done(vectorNorm(op, x, axes, keepDims, ord, out))
}

func normDtype(op *opcore.Op, x *tensor.Tensor) error {
	dt := x.Dtype()
	if !opcore.IsFloat(dt) && !dt.IsComplex() {
		return op.Unsupported(dt, "float16 (computed in float32), float32, float64, complex64, complex128")
	}
	return op.RequireDtypes(dt, opcore.ComputeDtype(dt.Real()))
}

func vectorNorm(op *opcore.Op, x *tensor.Tensor, axes []int, keepDims bool, ord float64, out *tensor.Tensor) error {
	if err := normDtype(op, x); err != nil {
		return err
	}
	shape := x.Shape()
	ax, err := opcore.NormAxes(op.Name(), axes, len(shape))
	if err != nil {
		return err
	}
	y, err := op.Output(out, x.Dtype().Real(), opcore.ReducedShape(shape, ax, keepDims))
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	lay, err := op.ReduceLayout(shape, ax)
	if err != nil {
		return err
	}
	return normRows(op, x, lay, ord, y)
}

// normRows writes into y the ord-norm of each of lay's m rows of x.
func normRows(op *opcore.Op, x *tensor.Tensor, lay opcore.RedLayout, ord float64, y *tensor.Tensor) error {
	if lay.M == 0 {
		return nil
	}
	if lay.N == 0 {
		if ord < 0 {
			return op.Errorf("the %v-norm of no elements has no value", ord)
		}
		return op.Zeros(y)
	}
	dt := y.Dtype()
	acc := opcore.ComputeDtype(dt)
	t, err := op.Temp(acc, []int{lay.M * lay.N})
	if err != nil {
		return err
	}
	if err := normGather(op, x, lay, ord == 0, t); err != nil {
		return err
	}
	rows := opcore.RedLayout{M: lay.M, N: lay.N}
	spec := func(k opcore.ReduceKind, out tensor.Dtype) opcore.PassSpec {
		return opcore.PassSpec{Kind: k, In: acc, Acc: acc, Out: out}
	}
	switch {
	case math.IsInf(ord, 1):
		return op.ReducePasses(spec(opcore.KindMax, dt), t, nil, rows, y)
	case math.IsInf(ord, -1):
		return op.ReducePasses(spec(opcore.KindMin, dt), t, nil, rows, y)
	case ord == 0 || ord == 1:
		return op.ReducePasses(spec(opcore.KindSum, dt), t, nil, rows, y)
	}
	sc, err := op.Temp(acc, []int{lay.M})
	if err != nil {
		return err
	}
	sum, err := op.Temp(acc, []int{lay.M})
	if err != nil {
		return err
	}
	k := opcore.KindMax
	if ord < 0 {
		k = opcore.KindMin
	}
	if err := op.ReducePasses(spec(k, acc), t, nil, rows, sc); err != nil {
		return err
	}
	if err := linRun(op, normPowGLSL(op, acc, ord), []*tensor.Tensor{t, sc}, lay.M*lay.N, uint32(lay.M*lay.N), uint32(lay.N)); err != nil {
		return err
	}
	if err := op.ReducePasses(spec(opcore.KindSum, acc), t, nil, rows, sum); err != nil {
		return err
	}
	return linRun(op, normRootGLSL(op, acc, dt, ord), []*tensor.Tensor{sc, sum, y}, lay.M, uint32(lay.M))
}

// normGather writes |x| (or x != 0 as 0 or 1) into t, row after row of
// lay's reduced elements.
func normGather(op *opcore.Op, x *tensor.Tensor, lay opcore.RedLayout, nonzero bool, t *tensor.Tensor) error {
	dims, strides := []int{lay.M * lay.N}, []int{1}
	if lay.Strided {
		dims, strides = lay.Dims, lay.Strides
	}
	push := []any{uint32(lay.M * lay.N)}
	for _, s := range [][]int{dims, strides} {
		for _, v := range s {
			push = append(push, uint32(v))
		}
	}
	return linRun(op, normGatherGLSL(x.Dtype(), t.Dtype(), len(dims), nonzero), []*tensor.Tensor{x, t}, lay.M*lay.N, push...)
}

// MatrixNorm computes a norm of each matrix of x ([..., M, N];
// "matrix_norm", Attrs.Ord, Attrs.KeepDims): "fro" (default) the
// Frobenius norm, "nuc" the sum of the singular values, "1"/"-1" the
// largest/smallest column sum of |x|, "inf"/"-inf" the largest/smallest
// row sum, "2"/"-2" the largest/smallest singular value. The result has
// x's real dtype and the stack's shape (keepdims: [..., 1, 1]). Float16,
// float32, float64, complex64 and complex128 (float16 computes in
// float32; complex entries count as |z|). The singular values
// come from the one-sided Jacobi SVD (see SVD); the other norms from
// reductions (see VectorNorm). Matrices of no elements have "fro" and
// "nuc" norms of 0; the other ords refuse them.
func MatrixNorm(o opcore.Owner, x *tensor.Tensor, ord string, keepDims bool, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "matrix_norm", x)
	if err != nil {
		return nil, err
	}
	return op.Done(matrixNorm(op, x, ord, keepDims, out))
}

func matrixNorm(op *opcore.Op, x *tensor.Tensor, ord string, keepDims bool, out *tensor.Tensor) error {
	if err := checkMatrices(op, x, false); err != nil {
		return err
	}
	switch ord {
	case "":
		ord = "fro"
	case "1.0", "+1":
		ord = "1"
	case "-1.0":
		ord = "-1"
	case "2.0", "+2":
		ord = "2"
	case "-2.0":
		ord = "-2"
	case "+inf", "Infinity", "inf", "Inf":
		ord = "inf"
	case "-Infinity", "-Inf":
		ord = "-inf"
	}
	if !slices.Contains([]string{"fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf"}, ord) {
		return op.Errorf("ord %q: want fro, nuc, 1, -1, 2, -2, inf or -inf", ord)
	}
	shape := x.Shape()
	r := len(shape)
	oshape := slices.Clone(shape[:r-2])
	if keepDims {
		oshape = append(oshape, 1, 1)
	}
	y, err := op.Output(out, x.Dtype().Real(), oshape)
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	B := opcore.Numel(shape[:r-2])
	if B == 0 {
		return nil
	}
	if shape[r-2]*shape[r-1] == 0 {
		if ord != "fro" && ord != "nuc" {
			return op.Errorf("the %s-norm of an empty matrix has no value", ord)
		}
		return op.Zeros(y)
	}
	switch ord {
	case "fro":
		lay, err := op.ReduceLayout(shape, []int{r - 2, r - 1})
		if err != nil {
			return err
		}
		return normRows(op, x, lay, 2, y)
	case "1", "-1", "inf", "-inf":
		// Sums of |x| down the columns (1) or along the rows (inf), then
		// their largest or smallest.
		axis, keep := r-2, shape[r-1]
		if ord == "inf" || ord == "-inf" {
			axis, keep = r-1, shape[r-2]
		}
		lay, err := op.ReduceLayout(shape, []int{axis})
		if err != nil {
			return err
		}
		acc := opcore.ComputeDtype(y.Dtype())
		t, err := op.Temp(acc, []int{lay.M * lay.N})
		if err != nil {
			return err
		}
		sums, err := op.Temp(acc, []int{lay.M})
		if err != nil {
			return err
		}
		if err := normGather(op, x, lay, false, t); err != nil {
			return err
		}
		if err := op.ReducePasses(opcore.PassSpec{Kind: opcore.KindSum, In: acc, Acc: acc, Out: acc}, t, nil, opcore.RedLayout{M: lay.M, N: lay.N}, sums); err != nil {
			return err
		}
		k := opcore.KindMax
		if ord[0] == '-' {
			k = opcore.KindMin
		}
		return op.ReducePasses(opcore.PassSpec{Kind: k, In: acc, Acc: acc, Out: y.Dtype()}, sums, nil, opcore.RedLayout{M: B, N: keep}, y)
	}
	w, err := jacobi(op, x, false, false)
	if err != nil {
		return err
	}
	return linRun(op, normSingularGLSL(w.acc, y.Dtype(), ord), []*tensor.Tensor{w.s, w.perm, w.scale, y}, B, uint32(B), uint32(w.N))
}

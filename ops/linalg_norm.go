package ops

import (
	"math"
	"slices"
	"strconv"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	builtin("vector_norm", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := inputs("vector_norm", in, 1); err != nil {
			return nil, err
		}
		if err := tooMany("vector_norm", out, 1); err != nil {
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
		return VectorNorm(o, in[0], at.Axes, at.KeepDims, ord, outAt(out, 0))
	})
	builtin("matrix_norm", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := inputs("matrix_norm", in, 1); err != nil {
			return nil, err
		}
		if err := tooMany("matrix_norm", out, 1); err != nil {
			return nil, err
		}
		return MatrixNorm(o, in[0], at.Ord, at.KeepDims, outAt(out, 0))
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
func VectorNorm(o Owner, x *tensor.Tensor, axes []int, keepDims bool, ord float64, out *tensor.Tensor) (*Op, error) {
	op, err := newOp(o, "vector_norm", x)
	if err != nil {
		return nil, err
	}
	return op.done(op.vectorNorm(x, axes, keepDims, ord, out))
}

func (op *Op) normDtype(x *tensor.Tensor) error {
	dt := x.Dtype()
	if !isFloat(dt) && !dt.IsComplex() {
		return op.unsupported(dt, "float16 (computed in float32), float32, float64, complex64, complex128")
	}
	return op.requireDtypes(dt, computeDtype(dt.Real()))
}

func (op *Op) vectorNorm(x *tensor.Tensor, axes []int, keepDims bool, ord float64, out *tensor.Tensor) error {
	if err := op.normDtype(x); err != nil {
		return err
	}
	shape := x.Shape()
	ax, err := normAxes(op.name, axes, len(shape))
	if err != nil {
		return err
	}
	y, err := op.output(out, x.Dtype().Real(), reducedShape(shape, ax, keepDims))
	if err != nil {
		return err
	}
	if err := op.noAlias(); err != nil {
		return err
	}
	lay, err := op.reduceLayout(shape, ax)
	if err != nil {
		return err
	}
	return op.normRows(x, lay, ord, y)
}

// normRows writes into y the ord-norm of each of lay's m rows of x.
func (op *Op) normRows(x *tensor.Tensor, lay redLayout, ord float64, y *tensor.Tensor) error {
	if lay.m == 0 {
		return nil
	}
	if lay.n == 0 {
		if ord < 0 {
			return op.errorf("the %v-norm of no elements has no value", ord)
		}
		return op.zeros(y)
	}
	dt := y.Dtype()
	acc := computeDtype(dt)
	t, err := op.temp(acc, []int{lay.m * lay.n})
	if err != nil {
		return err
	}
	if err := op.normGather(x, lay, ord == 0, t); err != nil {
		return err
	}
	rows := redLayout{m: lay.m, n: lay.n}
	spec := func(k reduceKind, out tensor.Dtype) passSpec {
		return passSpec{kind: k, in: acc, acc: acc, out: out}
	}
	switch {
	case math.IsInf(ord, 1):
		return op.reducePasses(spec(kindMax, dt), t, nil, rows, y)
	case math.IsInf(ord, -1):
		return op.reducePasses(spec(kindMin, dt), t, nil, rows, y)
	case ord == 0 || ord == 1:
		return op.reducePasses(spec(kindSum, dt), t, nil, rows, y)
	}
	sc, err := op.temp(acc, []int{lay.m})
	if err != nil {
		return err
	}
	sum, err := op.temp(acc, []int{lay.m})
	if err != nil {
		return err
	}
	k := kindMax
	if ord < 0 {
		k = kindMin
	}
	if err := op.reducePasses(spec(k, acc), t, nil, rows, sc); err != nil {
		return err
	}
	if err := op.linRun(normPowGLSL(op, acc, ord), []*tensor.Tensor{t, sc}, lay.m*lay.n, uint32(lay.m*lay.n), uint32(lay.n)); err != nil {
		return err
	}
	if err := op.reducePasses(spec(kindSum, acc), t, nil, rows, sum); err != nil {
		return err
	}
	return op.linRun(normRootGLSL(op, acc, dt, ord), []*tensor.Tensor{sc, sum, y}, lay.m, uint32(lay.m))
}

// normGather writes |x| (or x != 0 as 0 or 1) into t, row after row of
// lay's reduced elements.
func (op *Op) normGather(x *tensor.Tensor, lay redLayout, nonzero bool, t *tensor.Tensor) error {
	dims, strides := []int{lay.m * lay.n}, []int{1}
	if lay.strided {
		dims, strides = lay.dims, lay.strides
	}
	push := []any{uint32(lay.m * lay.n)}
	for _, s := range [][]int{dims, strides} {
		for _, v := range s {
			push = append(push, uint32(v))
		}
	}
	return op.linRun(normGatherGLSL(x.Dtype(), t.Dtype(), len(dims), nonzero), []*tensor.Tensor{x, t}, lay.m*lay.n, push...)
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
func MatrixNorm(o Owner, x *tensor.Tensor, ord string, keepDims bool, out *tensor.Tensor) (*Op, error) {
	op, err := newOp(o, "matrix_norm", x)
	if err != nil {
		return nil, err
	}
	return op.done(op.matrixNorm(x, ord, keepDims, out))
}

func (op *Op) matrixNorm(x *tensor.Tensor, ord string, keepDims bool, out *tensor.Tensor) error {
	if err := op.checkMatrices(x, false); err != nil {
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
		return op.errorf("ord %q: want fro, nuc, 1, -1, 2, -2, inf or -inf", ord)
	}
	shape := x.Shape()
	r := len(shape)
	oshape := slices.Clone(shape[:r-2])
	if keepDims {
		oshape = append(oshape, 1, 1)
	}
	y, err := op.output(out, x.Dtype().Real(), oshape)
	if err != nil {
		return err
	}
	if err := op.noAlias(); err != nil {
		return err
	}
	B := numel(shape[:r-2])
	if B == 0 {
		return nil
	}
	if shape[r-2]*shape[r-1] == 0 {
		if ord != "fro" && ord != "nuc" {
			return op.errorf("the %s-norm of an empty matrix has no value", ord)
		}
		return op.zeros(y)
	}
	switch ord {
	case "fro":
		lay, err := op.reduceLayout(shape, []int{r - 2, r - 1})
		if err != nil {
			return err
		}
		return op.normRows(x, lay, 2, y)
	case "1", "-1", "inf", "-inf":
		// Sums of |x| down the columns (1) or along the rows (inf), then
		// their largest or smallest.
		axis, keep := r-2, shape[r-1]
		if ord == "inf" || ord == "-inf" {
			axis, keep = r-1, shape[r-2]
		}
		lay, err := op.reduceLayout(shape, []int{axis})
		if err != nil {
			return err
		}
		acc := computeDtype(y.Dtype())
		t, err := op.temp(acc, []int{lay.m * lay.n})
		if err != nil {
			return err
		}
		sums, err := op.temp(acc, []int{lay.m})
		if err != nil {
			return err
		}
		if err := op.normGather(x, lay, false, t); err != nil {
			return err
		}
		if err := op.reducePasses(passSpec{kind: kindSum, in: acc, acc: acc, out: acc}, t, nil, redLayout{m: lay.m, n: lay.n}, sums); err != nil {
			return err
		}
		k := kindMax
		if ord[0] == '-' {
			k = kindMin
		}
		return op.reducePasses(passSpec{kind: k, in: acc, acc: acc, out: y.Dtype()}, sums, nil, redLayout{m: B, n: keep}, y)
	}
	w, err := op.jacobi(x, false, false)
	if err != nil {
		return err
	}
	return op.linRun(normSingularGLSL(w.acc, y.Dtype(), ord), []*tensor.Tensor{w.s, w.perm, w.scale, y}, B, uint32(B), uint32(w.N))
}

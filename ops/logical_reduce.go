package ops

import (
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, []int, bool, *tensor.Tensor) (*Op, error){
		"all": All, "any": Any,
	} {
		builtin(name, reduceBuilder(name, f))
	}
}

// All tests whether every element of x along axes is true ("all"): nonzero,
// NaN included, as the array API's all. The result is bool; an empty
// reduction is true. Axes and keepDims as for Sum. Dtypes: every dtype,
// bool included.
func All(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return logicalReduce(o, "all", kindMin, x, axes, keepDims, out)
}

// Any tests whether some element of x along axes is true ("any"):
// nonzero, NaN included. The result is bool; an empty reduction is false.
// Axes and keepDims as for Sum. Dtypes: every dtype, bool included.
func Any(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return logicalReduce(o, "any", kindMax, x, axes, keepDims, out)
}

// logicalReduce is All (the minimum of x != 0 as 0 or 1) and Any (the
// maximum). The first pass loads x != 0 (passSpec.truth); partials are
// uint32; the last pass writes bool, where the identity of an empty
// segment (0xffffffff for the minimum, 0 for the maximum) becomes true
// or false.
func logicalReduce(o Owner, name string, kind reduceKind, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	op, err := newOp(o, name, x)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	ax, err := normAxes(name, axes, len(shape))
	if err != nil {
		return op.fail(err)
	}
	dt := x.Dtype()
	if err := op.requireDtypes(dt, tensor.Bool); err != nil {
		return op.fail(err)
	}
	lay, err := op.reduceLayout(shape, ax)
	if err != nil {
		return op.fail(err)
	}
	y, err := op.output(out, tensor.Bool, reducedShape(shape, ax, keepDims))
	if err != nil {
		return op.fail(err)
	}
	if err := op.noAlias(); err != nil {
		return op.fail(err)
	}
	spec := passSpec{kind: kind, in: dt, acc: tensor.Uint32, out: tensor.Bool, truth: true}
	return op.done(op.reducePasses(spec, x, nil, lay, y))
}

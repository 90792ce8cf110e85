package opcore

import (
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, []int, bool, *tensor.Tensor) (*Op, error){
		"all": All, "any": Any,
	} {
		Builtin(name, reduceBuilder(name, f))
	}
}

// All tests whether every element of x along axes is true ("all"): nonzero,
// NaN included, as the array API's all. The result is bool; an empty
// reduction is true. Axes and keepDims as for Sum. Dtypes: every dtype,
// bool included.
func All(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return reduce(o, "all", KindMin, reduceTruth, x, axes, keepDims, out)
}

// Any tests whether some element of x along axes is true ("any"):
// nonzero, NaN included. The result is bool; an empty reduction is false.
// Axes and keepDims as for Sum. Dtypes: every dtype, bool included.
func Any(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return reduce(o, "any", KindMax, reduceTruth, x, axes, keepDims, out)
}

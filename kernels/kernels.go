package kernels

import (
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// Owner is what constructors take: a *vkflow.Manager.
//
// Deprecated: use ops.Owner, or pass the *vkflow.Manager itself.
type Owner = ops.Owner

// Multiply computes out[i] = a[i] * b[i] over float32 tensors of one
// length. No push constants. The vec4 shader runs when the length is a
// multiple of 4.
//
// Deprecated: use ops.Mul, which takes every numeric dtype and
// broadcasts.
func Multiply(o Owner, a, b, out *tensor.Tensor) (*algorithm.Algorithm, error) {
	return kernels.Multiply(o, a, b, out)
}

// MultiplyScalar is Multiply with the one-element-per-invocation shader,
// whatever the length.
//
// Deprecated: use ops.Mul.
func MultiplyScalar(o Owner, a, b, out *tensor.Tensor) (*algorithm.Algorithm, error) {
	return kernels.MultiplyScalar(o, a, b, out)
}

// Add computes out[i] = a[i] + b[i] over float32 tensors of one length.
// No push constants. The vec4 shader runs when the length is a multiple
// of 4.
//
// Deprecated: use ops.Add, which takes every numeric dtype and
// broadcasts.
func Add(o Owner, a, b, out *tensor.Tensor) (*algorithm.Algorithm, error) {
	return kernels.Add(o, a, b, out)
}

// Saxpy computes y = alpha*x + y in place over float32 tensors of one
// length. Push constant: alpha float32.
//
// Deprecated: use ops.Mul then ops.Add (alpha a one-element tensor,
// broadcast), or algorithm.New with shaders.Saxpy for the same
// algorithm.
func Saxpy(o Owner, x, y *tensor.Tensor) (*algorithm.Algorithm, error) {
	return kernels.Saxpy(o, x, y)
}

package kernels

import (
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
)

// Owner is what constructors take: a *vkflow.Manager.
type Owner = core.Owner

func sameFloat32(name string, ts ...*tensor.Tensor) error {
	for i, t := range ts {
		if t == nil {
			return core.Invalid("%s: tensor %d is nil", name, i)
		}
		if t.Closed() {
			return core.Closed(name + ": tensor")
		}
		if t.Dtype() != tensor.Float32 {
			return core.Invalid("%s: mismatched dtypes: tensor %d is %v, want float32", name, i, t.Dtype())
		}
		if t.Len() != ts[0].Len() {
			return core.Invalid("%s: size mismatch: tensor %d has %d elements, tensor 0 has %d", name, i, t.Len(), ts[0].Len())
		}
	}
	return nil
}

func elementwise(o Owner, name string, scalar, vec4 []byte, a, b, out *tensor.Tensor) (*algorithm.Algorithm, error) {
	if err := sameFloat32(name, a, b, out); err != nil {
		return nil, err
	}
	ts := []*tensor.Tensor{a, b, out}
	if out.Len()%4 == 0 {
		return algorithm.New(o, vec4, ts, algorithm.ItemsPerInvocation(4))
	}
	return algorithm.New(o, scalar, ts)
}

// Multiply computes out[i] = a[i] * b[i] over float32 tensors of one
// length. No push constants.
func Multiply(o Owner, a, b, out *tensor.Tensor) (*algorithm.Algorithm, error) {
	return elementwise(o, "Multiply", shaders.Mul, shaders.MulVec4, a, b, out)
}

// MultiplyScalar is Multiply with the one-element-per-invocation shader,
// whatever the length.
func MultiplyScalar(o Owner, a, b, out *tensor.Tensor) (*algorithm.Algorithm, error) {
	if err := sameFloat32("MultiplyScalar", a, b, out); err != nil {
		return nil, err
	}
	return algorithm.New(o, shaders.Mul, []*tensor.Tensor{a, b, out})
}

// Add computes out[i] = a[i] + b[i] over float32 tensors of one length.
// No push constants.
func Add(o Owner, a, b, out *tensor.Tensor) (*algorithm.Algorithm, error) {
	return elementwise(o, "Add", shaders.Add, shaders.AddVec4, a, b, out)
}

// Saxpy computes y = alpha*x + y in place over float32 tensors of one
// length. Push constant: alpha float32.
func Saxpy(o Owner, x, y *tensor.Tensor) (*algorithm.Algorithm, error) {
	if err := sameFloat32("Saxpy", x, y); err != nil {
		return nil, err
	}
	return algorithm.New(o, shaders.Saxpy, []*tensor.Tensor{x, y})
}

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

// LogRegMaxFeatures is the largest feature count LogRegStep supports.
const LogRegMaxFeatures = 16

// LogRegStep is one full-batch gradient-descent step of logistic
// regression, run by one workgroup: x is m×d (row-major), y has m labels
// (0 or 1), w has d weights and b one bias, both updated in place; loss
// receives the mean cross-entropy before the step. Push constants:
// m uint32, d uint32, learning rate float32 (see LogRegPush).
func LogRegStep(o Owner, x, y, w, b, loss *tensor.Tensor) (*algorithm.Algorithm, error) {
	for i, t := range []*tensor.Tensor{x, y, w, b, loss} {
		if t == nil {
			return nil, core.Invalid("LogRegStep: tensor %d is nil", i)
		}
		if t.Dtype() != tensor.Float32 {
			return nil, core.Invalid("LogRegStep: mismatched dtypes: tensor %d is %v, want float32", i, t.Dtype())
		}
	}
	m, d := y.Len(), w.Len()
	switch {
	case d > LogRegMaxFeatures:
		return nil, core.Invalid("LogRegStep: %d features, at most %d", d, LogRegMaxFeatures)
	case x.Len() != m*d:
		return nil, core.Invalid("LogRegStep: size mismatch: x has %d elements, want m*d = %d*%d", x.Len(), m, d)
	case b.Len() != 1 || loss.Len() != 1:
		return nil, core.Invalid("LogRegStep: b and loss must have one element")
	}
	return algorithm.New(o, shaders.LogReg, []*tensor.Tensor{x, y, w, b, loss}, algorithm.Workgroups(1, 1, 1))
}

// LogRegPush returns LogRegStep's push constants for m samples, d features
// and learning rate lr, in dispatch order.
func LogRegPush(m, d int, lr float32) []any { return []any{uint32(m), uint32(d), lr} }

package kernels

import (
	"errors"
	"math"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
)

// LogRegMaxFeatures is the largest feature count LogRegStep supports.
const LogRegMaxFeatures = 16

// Rows of the samples one workgroup of shaders.LogRegGrad sums, and the
// floats of its slot in the partial-sum buffer.
const (
	logRegRows   = 16 * 256
	logRegStride = LogRegMaxFeatures + 2
)

// LogReg is one full-batch gradient-descent step of logistic regression,
// as two dispatches: every workgroup of the first sums the gradient and
// loss over 4096 samples into a scratch buffer, and one workgroup of the
// second adds those partial sums and updates the weights. The sequence
// infers the barriers between them. No loop in either grows beyond a few
// dozen iterations whatever the sample count.
type LogReg struct {
	grad, update *algorithm.Algorithm
	partial      *tensor.Tensor
	m, d, groups int
}

// LogRegStep prepares training steps on float32 tensors: x is m×d
// (row-major, 1 <= d <= LogRegMaxFeatures), y has the m labels (0 or 1),
// w has d weights and b one bias, both updated in place by each step; loss
// receives the mean cross-entropy under the weights before the step. x
// must fit in one storage-buffer binding (maxStorageBufferRange, 128 MiB on
// lavapipe). Record steps with Record; Close frees the two algorithms and
// the scratch buffer.
func LogRegStep(o Owner, x, y, w, b, loss *tensor.Tensor) (*LogReg, error) {
	dev, err := core.From(o)
	if err != nil {
		return nil, err
	}
	for i, t := range []*tensor.Tensor{x, y, w, b, loss} {
		if t == nil {
			return nil, core.Invalid("LogRegStep: tensor %d is nil", i)
		}
		if t.Dtype() != tensor.Float32 {
			return nil, core.Invalid("LogRegStep: mismatched dtypes: tensor %d is %v, want float32", i, t.Dtype())
		}
	}
	m, d := y.Len(), w.Len()
	limit := uint64(dev.Info.Limits.MaxStorageBufferRange)
	switch {
	case d < 1 || d > LogRegMaxFeatures:
		return nil, core.Invalid("LogRegStep: %d features, want 1 to %d", d, LogRegMaxFeatures)
	case m < 1:
		return nil, core.Invalid("LogRegStep: no samples")
	case x.Len() != m*d:
		return nil, core.Invalid("LogRegStep: size mismatch: x has %d elements, want m*d = %d*%d", x.Len(), m, d)
	case b.Len() != 1 || loss.Len() != 1:
		return nil, core.Invalid("LogRegStep: b and loss must have one element")
	case uint64(m)*uint64(d)*4 > limit || m > math.MaxUint32:
		return nil, core.Invalid("LogRegStep: x of %d×%d floats exceeds maxStorageBufferRange (%d bytes)", m, d, limit)
	}
	l := &LogReg{m: m, d: d, groups: (m + logRegRows - 1) / logRegRows}
	if l.partial, err = tensor.New(o, tensor.Float32, []int{l.groups * logRegStride}, tensor.In(tensor.Storage)); err != nil {
		return nil, err
	}
	if l.grad, err = algorithm.New(o, shaders.LogRegGrad, []*tensor.Tensor{x, y, w, b, l.partial}, algorithm.Workgroups(uint32(l.groups), 1, 1)); err != nil {
		l.Close()
		return nil, err
	}
	if l.update, err = algorithm.New(o, shaders.LogRegUpdate, []*tensor.Tensor{l.partial, w, b, loss}, algorithm.Workgroups(1, 1, 1)); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Record appends one step with learning rate lr to s: the two dispatches.
// It returns s for chaining; errors stick to s as for any recording.
func (l *LogReg) Record(s *sequence.Sequence, lr float32) *sequence.Sequence {
	return s.Dispatch(l.grad, uint32(l.m), uint32(l.d)).
		Dispatch(l.update, uint32(l.m), uint32(l.d), lr, uint32(l.groups))
}

// Groups returns how many workgroups the first dispatch runs.
func (l *LogReg) Groups() int { return l.groups }

// Close releases the algorithms and the scratch buffer; sequences that
// recorded steps keep them alive until they are done. Idempotent; nil is
// a no-op.
func (l *LogReg) Close() error {
	if l == nil {
		return nil
	}
	var errs []error
	if l.grad != nil {
		errs = append(errs, l.grad.Close())
	}
	if l.update != nil {
		errs = append(errs, l.update.Close())
	}
	if l.partial != nil {
		errs = append(errs, l.partial.Close())
	}
	return errors.Join(errs...)
}

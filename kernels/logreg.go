package kernels

import (
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// LogRegMaxFeatures is the largest feature count LogRegStep supports. It
// is ops.LogRegMaxFeatures (it was 16 before LogRegStep moved to ops).
//
// Deprecated: use ops.LogRegMaxFeatures.
const LogRegMaxFeatures = ops.LogRegMaxFeatures

// LogReg is one full-batch gradient-descent step of logistic regression
// on float32 data, as two dispatches. Record appends a step to a
// sequence, Groups returns how many workgroups the first dispatch runs,
// and Close frees the pipelines and the scratch buffer (idempotent; nil is
// a no-op).
//
// Deprecated: use ops.LogReg, which is the same type.
type LogReg = ops.LogReg

// LogRegStep prepares training steps on float32 tensors: x is m×d
// (row-major, 1 <= d <= LogRegMaxFeatures), y has the m labels (0 or 1),
// w has d weights and b one bias, both updated in place by each step; loss
// receives the mean cross-entropy under the weights before the step. x
// must fit in one storage-buffer binding. Record steps with Record; Close
// frees the pipelines and the scratch buffer.
//
// Deprecated: use ops.LogRegStep.
func LogRegStep(o Owner, x, y, w, b, loss *tensor.Tensor) (*LogReg, error) {
	return ops.LogRegStep(o, x, y, w, b, loss)
}

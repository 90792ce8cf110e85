// The ops API over its core, ops/internal/opcore: types are aliases, functions forward.

package ops

import (
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// All tests whether every element of x along axes is true ("all"): nonzero,
// NaN included, as the array API's all. The result is bool; an empty
// reduction is true. Axes and keepDims as for Sum. Dtypes: every dtype,
// bool included.
func All(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return opcore.All(o, x, axes, keepDims, out)
}

// Any tests whether some element of x along axes is true ("any"):
// nonzero, NaN included. The result is bool; an empty reduction is false.
// Axes and keepDims as for Sum. Dtypes: every dtype, bool included.
func Any(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return opcore.Any(o, x, axes, keepDims, out)
}

// Argmax gives the int64 index of the largest element along axis, or of
// the flattened array when axis is nil ("argmax"; Attrs.Axes of zero or
// one entry). Ties give the first index; NaN counts as the largest.
func Argmax(o Owner, x *tensor.Tensor, axis *int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return opcore.Argmax(o, x, axis, keepDims, out)
}

// CumulativeProd computes running products of x along axis
// ("cumulative_prod"), with the initial value 1; otherwise as
// CumulativeSum.
func CumulativeProd(o Owner, x *tensor.Tensor, axis *int, dtype tensor.Dtype, includeInitial bool, out *tensor.Tensor) (*Op, error) {
	return opcore.CumulativeProd(o, x, axis, dtype, includeInitial, out)
}

// CumulativeSum computes running sums of x along axis ("cumulative_sum";
// Attrs.Axes: one axis, or nil for a 1-d x; Attrs.Dtype; Attrs.IncludeInitial).
// Element k of the result along axis is x[0] + ... + x[k]; with
// includeInitial the result is one longer along axis and starts with 0.
//
// dtype is the result's dtype; zero is the array API standard's default:
// int64 for signed integers and bool, uint64 for unsigned integers, x's own
// for floats. x is converted to dtype element by element (as a cast) and
// summed in it (float16 in float32, rounded once per element; integers
// wrap modulo 2^bits). Every real dtype in, every numeric dtype out.
//
// It is a work-efficient scan of any length: per-workgroup scans of blocks
// of 2048 elements in shared memory, a scan of the blocks' totals (the same
// kernel, recursively), and passes adding them back: 2L dispatches for L
// levels (L = 1 up to 2048 elements along axis, 2 up to 4M). Floating-point
// sums are associated in a tree within each block, so they differ from a
// sequential loop's by rounding.
func CumulativeSum(o Owner, x *tensor.Tensor, axis *int, dtype tensor.Dtype, includeInitial bool, out *tensor.Tensor) (*Op, error) {
	return opcore.CumulativeSum(o, x, axis, dtype, includeInitial, out)
}

// LogReg is one full-batch gradient-descent step of logistic regression
// on float32 data, as two dispatches. In the first, each workgroup takes
// 256·R samples (R = 8 up to 128 features, 1024/d past it): an invocation
// per sample (R of them each) computes its prediction error and loss,
// then the workgroup sums error × feature over its samples for
// every feature (blocks of up to 256 features, each summed over slices of
// the samples and a tree), and writes the d gradient sums, the bias
// gradient and the loss to its slot of a scratch buffer (up to 16
// features, an invocation keeps the sums of its samples in registers
// instead, and the workgroup adds them four at a time). In the second,
// one workgroup per weight (and one for the bias, one for the loss) adds
// that column over every slot and updates it. No loop grows with the
// sample count beyond slots/256 in the second pass.
type LogReg = opcore.LogReg

// LogRegMaxFeatures is the most features LogRegStep takes. Past it, the
// loops of one invocation would near lavapipe's cap of 65535 iterations
// (about 2d per step).
const LogRegMaxFeatures = opcore.LogRegMaxFeatures

// LogRegStep prepares training steps: x is m×d (row-major, 1 <= d <=
// LogRegMaxFeatures), y holds the m labels (0 or 1), w the d weights and b
// the one bias, both updated in place by each step; loss receives the mean
// cross-entropy under the weights before the step. All are float32; x
// must fit one storage-buffer binding. Record or AddTo records steps;
// Close frees the pipelines and the scratch buffer.
func LogRegStep(o Owner, x *tensor.Tensor, y *tensor.Tensor, w *tensor.Tensor, b *tensor.Tensor, loss *tensor.Tensor) (*LogReg, error) {
	return opcore.LogRegStep(o, x, y, w, b, loss)
}

// Max takes the largest of x's elements along axes ("max"); NaN wins.
// Axes, dtypes and sizes as for Sum.
func Max(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return opcore.Max(o, x, axes, keepDims, out)
}

// Mean averages x's elements along axes ("mean"); floating-point dtypes
// only. Axes, dtypes and sizes as for Sum.
func Mean(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return opcore.Mean(o, x, axes, keepDims, out)
}

// Min takes the smallest of x's elements along axes ("min"); NaN wins.
// Axes, dtypes and sizes as for Sum.
func Min(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return opcore.Min(o, x, axes, keepDims, out)
}

// Prod multiplies x's elements along axes ("prod"). Axes, dtypes and
// sizes as for Sum.
func Prod(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return opcore.Prod(o, x, axes, keepDims, out)
}

// Softmax computes exp(x) / sum(exp(x)) along axis ("softmax"; Attrs.Axes:
// nil is the last axis, else one axis), for float16, float32 and float64
// (float16 computes in float32 and rounds once). A negative axis counts
// from the end; a 0-d x takes axis 0 or -1 and gives 1.
//
// It is numerically stable: the row's maximum m is subtracted first, so
// large inputs do not overflow: y = exp(x - m) / sum(exp(x - m)). Special
// values follow from that formula, as torch.softmax and
// scipy.special.softmax give them:
//   - a row holding NaN is NaN throughout;
//   - a row holding +Inf is NaN throughout: exp(Inf - Inf) is NaN, and so
//     is the row's sum;
//   - a row of only -Inf is NaN throughout (-Inf - -Inf is NaN);
//   - otherwise -Inf entries give 0.
//
// Results below the smallest normal number may be flushed to zero, as
// Vulkan allows (lavapipe does).
//
// Rows of any length: the op is the passes of a max along axis, those of
// a sum of exp(x - m) along axis (its first pass computes the exp), and
// one element-wise dispatch that divides; each invocation does a fixed
// amount of work.
func Softmax(o Owner, x *tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	return opcore.Softmax(o, x, axis, out)
}

// Sum adds x's elements along axes ("sum"); out nil allocates the
// result. What follows holds for every reduction (Sum, Mean, Prod, Max,
// Min, Argmax).
//
// Axes: nil reduces every axis; negative axes count from the end; an
// empty, non-nil list reduces none (each output is one element, as NumPy's
// axis=()). keepDims keeps the reduced axes as dimensions of size 1.
//
// Result dtypes, as the array API gives them:
//
//	op        input                         result
//	sum, prod float16, float32, float64     the same (float16 accumulates in float32, rounded once at the end)
//	          int8..int64, bool             int64 (wraps as int64 does)
//	          uint8..uint64                 uint64
//	          complex64, complex128         the same (prod multiplies as complex numbers)
//	mean      float16, float32, float64     the same; integers are an error: cast first
//	          complex64, complex128         the same
//	max, min  every real dtype              the same (bool: logical or / and); complex is an error
//	argmax    every real dtype              int64; complex is an error
//
// Empty reductions: a sum is 0, a prod 1, a mean NaN; max, min and argmax
// of an empty segment are ErrInvalid (NumPy raises). NaN propagates
// through max and min; argmax takes NaN as the maximum and gives the
// first index among equals (NumPy's first occurrence).
//
// Any size is right: the op is a few passes, each reducing every output's
// segment by up to 16384 (see reduce_glsl.go), recorded as one dispatch
// per pass; the sequence or graph puts the barriers between them.
// Workgroups combine their lanes with subgroup arithmetic where the
// device has it, else in shared memory. A float sum rounds each element's
// contribution at most 25 times per pass, so its error is at most
// 25 * passes * eps * sum(|x|) (2 passes up to 268M elements).
func Sum(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return opcore.Sum(o, x, axes, keepDims, out)
}

package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	Builtin("softmax", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs("softmax", in, 1); err != nil {
			return nil, err
		}
		if err := TooMany("softmax", out, 1); err != nil {
			return nil, err
		}
		axis := -1
		switch len(at.Axes) {
		case 0:
		case 1:
			axis = at.Axes[0]
		default:
			return nil, core.Invalid("ops.softmax: takes one axis, not %v", at.Axes)
		}
		return Softmax(o, in[0], axis, OutAt(out, 0))
	})
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
	op, err := NewOp(o, "softmax", x)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	dt := x.Dtype()
	if !IsFloat(dt) {
		return op.Fail(op.Unsupported(dt, "float16, float32, float64"))
	}
	rshape := shape
	if len(shape) == 0 {
		if axis != 0 && axis != -1 {
			return op.Fail(op.Errorf("axis %d of a 0-d tensor: use 0 or -1", axis))
		}
		rshape, axis = []int{1}, 0
	}
	ax, err := NormAxes("softmax", []int{axis}, len(rshape))
	if err != nil {
		return op.Fail(err)
	}
	acc := ComputeDtype(dt)
	if err := op.RequireDtypes(dt, acc); err != nil {
		return op.Fail(err)
	}
	y, err := op.OutputNoAlias(out, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	lay, err := op.ReduceLayout(rshape, ax)
	if err != nil {
		return op.Fail(err)
	}
	if lay.M == 0 || lay.N == 0 {
		return op, nil // empty: nothing to compute
	}
	mx, err := op.Temp(acc, []int{lay.M})
	if err != nil {
		return op.Fail(err)
	}
	sum, err := op.Temp(acc, []int{lay.M})
	if err != nil {
		return op.Fail(err)
	}
	if err := op.ReducePasses(PassSpec{Kind: KindMax, In: dt, Acc: acc, Out: acc}, x, nil, lay, mx); err != nil {
		return op.Fail(err)
	}
	if err := op.ReducePasses(PassSpec{Kind: KindSum, In: dt, Acc: acc, Out: acc, expOf: true}, x, mx, lay, sum); err != nil {
		return op.Fail(err)
	}
	inner := 1
	for _, d := range rshape[ax[0]+1:] {
		inner *= d
	}
	total := x.Len()
	groups, err := op.Grid(uint64(total), LocalSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.Dispatch(softmaxSource(dt, acc), []*tensor.Tensor{x, mx, sum, y}, groups,
		uint32(total), uint32(rshape[ax[0]]), uint32(inner)))
}

// softmaxSource is the last dispatch: y = exp(x - m[o]) / s[o], where o
// is the row of element e in the kept dimensions: x is [outer, n, inner]
// and o = (e / (n*inner))*inner + e % inner.
func softmaxSource(dt, acc tensor.Dtype) string {
	var b strings.Builder
	b.WriteString(Header(dt, acc))
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", LocalSize)
	t, a := GLSLType(dt), GLSLType(acc)
	fmt.Fprintf(&b, `layout(binding = 0) readonly buffer B0 { %[1]s x[]; };
layout(binding = 1) readonly buffer B1 { %[2]s mx[]; };
layout(binding = 2) readonly buffer B2 { %[2]s s[]; };
layout(binding = 3) writeonly buffer B3 { %[1]s y[]; };
layout(push_constant) uniform P { uint total; uint n; uint inner; };
`, t, a)
	b.WriteString(IndexGLSL)
	if acc == tensor.Float64 {
		b.WriteString(dexpGLSL())
	}
	fmt.Fprintf(&b, `void main() {
	uint e = gid();
	if (e >= total) return;
	uint o = (e / (n * inner)) * inner + e %% inner;
	y[e] = %[1]s(%[3]s(%[2]s(x[e]) - mx[o]) / s[o]);
}
`, t, a, expFn(acc))
	return b.String()
}

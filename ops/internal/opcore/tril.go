package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

func init() {
	for _, name := range []string{"tril", "triu"} {
		upper := name == "triu"
		Builtin(name, func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
			if err := Inputs(name, in, 1); err != nil {
				return nil, err
			}
			if err := TooMany(name, out, 1); err != nil {
				return nil, err
			}
			return triangle(o, name, upper, in[0], at.K, OutAt(out, 0))
		})
	}
}

// Tril keeps the lower triangle of each matrix of x (its last two
// dimensions; leading ones are a batch) and zeroes the rest ("tril";
// Attrs.K): element (i, j) stays where j - i <= k. k = 0 is the main
// diagonal, k > 0 diagonals above it, k < 0 below. Every dtype.
func Tril(o Owner, x *tensor.Tensor, k int, out *tensor.Tensor) (*Op, error) {
	return triangle(o, "tril", false, x, k, out)
}

// Triu keeps the upper triangle, j - i >= k ("triu"); otherwise as Tril.
func Triu(o Owner, x *tensor.Tensor, k int, out *tensor.Tensor) (*Op, error) {
	return triangle(o, "triu", true, x, k, out)
}

func triangle(o Owner, name string, upper bool, x *tensor.Tensor, k int, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, name, x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	shape := x.Shape()
	if GLSLType(dt) == "invalid" {
		return op.Fail(op.Unsupported(dt, "every real dtype"))
	}
	if len(shape) < 2 {
		return op.Fail(op.Errorf("x has shape %v: want at least 2 dimensions (matrices)", shape))
	}
	if err := op.RequireDtypes(dt); err != nil {
		return op.Fail(err)
	}
	y, err := op.OutputNoAlias(out, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	total := x.Len()
	if total == 0 {
		return op, nil
	}
	// k beyond the matrix keeps or zeroes everything: clamp it into int32.
	m, n := shape[len(shape)-2], shape[len(shape)-1]
	kk := min(max(k, -m-1), n+1)
	groups, err := op.Grid(uint64(total), LocalSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.Dispatch(triangleSource(dt, upper), []*tensor.Tensor{x, y}, groups,
		uint32(total), uint32(m), uint32(n), int32(kk)))
}

// triangleSource keeps x[e] where (j - i) compares with k, else writes 0.
func triangleSource(dt tensor.Dtype, upper bool) string {
	var b strings.Builder
	b.WriteString(Header(dt))
	t := GLSLType(dt)
	cmp := "<="
	if upper {
		cmp = ">="
	}
	fmt.Fprintf(&b, `layout(local_size_x = %d) in;
layout(binding = 0) readonly buffer X { %[2]s x[]; };
layout(binding = 1) writeonly buffer Y { %[2]s y[]; };
layout(push_constant) uniform P { uint total; uint m; uint n; int k; };
%[3]s
void main() {
	uint e = gid();
	if (e >= total) return;
	int j = int(e %% n);
	int i = int((e / n) %% m);
	y[e] = (j - i %[4]s k) ? x[e] : %[2]s(0);
}
`, LocalSize, t, IndexGLSL, cmp)
	return b.String()
}

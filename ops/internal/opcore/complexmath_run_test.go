package opcore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// cmOrder lists the functions of complexMathFns in a fixed order: the
// index is the test kernel's selector.
var cmOrder = []string{"exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan",
	"sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "pow"}

// cmKernel is a test kernel over complexMathGLSL(dt) alone: o[i] =
// fn(a[i]) (pow: fn(a[i], b[i])). One function a kernel: the compiler
// drops the others.
func cmKernel(dt tensor.Dtype, fn string) string {
	v := "vec2"
	if dt == tensor.Complex128 {
		v = "dvec2"
	}
	var b strings.Builder
	b.WriteString(Header(dt))
	b.WriteString(complexMathGLSL(dt))
	fmt.Fprintf(&b, `layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer A { %[1]s a[]; };
%[4]slayout(binding = %[5]d) writeonly buffer O { %[1]s o[]; };
layout(push_constant) uniform P { uint n; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i >= n) return;
	o[i] = %[2]s(a[i]%[3]s);
}
`, v, complexMathFns[fn], map[bool]string{true: ", b[i]"}[fn == "pow"],
		map[bool]string{true: "layout(binding = 1) readonly buffer B { " + v + " b[]; };\n"}[fn == "pow"],
		map[bool]int{true: 2, false: 1}[fn == "pow"])
	return b.String()
}

// cmRunner evaluates the complex functions on the device, one dispatch
// per call.
type cmRunner struct {
	t  *testing.T
	m  Owner
	dt tensor.Dtype
}

func newCMRunner(t *testing.T) *cmRunner {
	m, _ := testutil.Manager(t)
	return &cmRunner{t: t, m: m}
}

// run returns fn over zs (and ws for pow), rounded to dt's component type
// on the way in.
func (r *cmRunner) run(dt tensor.Dtype, fn string, zs, ws []complex128) []complex128 {
	t := r.t
	t.Helper()
	require.Contains(t, complexMathFns, fn)
	n := len(zs)
	if ws == nil {
		ws = make([]complex128, n)
	}
	flat := func(cs []complex128) []float64 {
		f := make([]float64, 0, 2*len(cs))
		for _, c := range cs {
			f = append(f, real(c), imag(c))
		}
		return f
	}
	upload := func(cs []complex128) *tensor.Tensor {
		f := flat(cs)
		var x *tensor.Tensor
		var err error
		if dt == tensor.Complex64 {
			f32 := make([]float32, len(f))
			for i, v := range f {
				f32[i] = float32(v)
			}
			x, err = tensor.FromSlice(r.m, f32)
		} else {
			x, err = tensor.FromSlice(r.m, f)
		}
		require.NoError(t, err)
		t.Cleanup(func() { _ = x.Close() })
		return x
	}
	ins := []*tensor.Tensor{upload(zs)}
	if fn == "pow" {
		ins = append(ins, upload(ws))
	}
	op, err := NewOp(r.m, "complexmath_test", ins...)
	require.NoError(t, err)
	comp := tensor.Float64
	if dt == tensor.Complex64 {
		comp = tensor.Float32
	}
	out, err := op.Output(nil, comp, []int{2 * n})
	require.NoError(t, err)
	groups, err := op.Grid(uint64(n), 64)
	require.NoError(t, err)
	op, err = op.Done(op.Dispatch(cmKernel(dt, fn), append(ins, out), groups, uint32(n)))
	require.NoError(t, err)
	defer func() { _ = op.Close() }()
	require.NoError(t, op.Run(context.Background()))
	var got []float64
	if dt == tensor.Complex64 {
		g, err := out.Float32s()
		require.NoError(t, err)
		for _, v := range g {
			got = append(got, float64(v))
		}
	} else {
		got, err = out.Float64s()
		require.NoError(t, err)
	}
	res := make([]complex128, n)
	for i := range res {
		res[i] = complex(got[2*i], got[2*i+1])
	}
	return res
}

// TestComplexMathCompiles: the GLSL of each dtype compiles on its own
// (the kernel holds nothing else), and both fit in one kernel.
func TestComplexMathCompiles(t *testing.T) {
	r := newCMRunner(t)
	for _, dt := range []tensor.Dtype{tensor.Complex64, tensor.Complex128} {
		start := time.Now()
		got := r.run(dt, "exp", []complex128{complex(0, math.Pi)}, nil)
		require.InDelta(t, -1, real(got[0]), 1e-6)
		t.Logf("%v exp: %v", dt, time.Since(start))
	}
	both := Header(tensor.Complex64) + complexMathGLSL(tensor.Complex64) + complexMathGLSL(tensor.Complex128) +
		complexMathGLSL(tensor.Complex64) + "layout(local_size_x = 1) in;\nlayout(binding = 0) buffer A { dvec2 d[]; vec2 f[]; };\n" +
		"void main() { d[0] = cexp(d[0]) + dvec2(clog(f[0])); }\n"
	op, err := NewOp(r.m, "complexmath_test")
	require.NoError(t, err)
	x, err := tensor.New(r.m, tensor.Float64, []int{4})
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	require.NoError(t, op.Dispatch(both, []*tensor.Tensor{x}, [3]uint32{1, 1, 1}))
	require.Equal(t, "", complexMathGLSL(tensor.Float32))
	for name, fn := range complexMathFns {
		require.Contains(t, cmOrder, name)
		require.Contains(t, complexMathF32, fn+"(")
	}
}

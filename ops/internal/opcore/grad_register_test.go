package opcore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

const cubeGLSL = `#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer Y { float y[]; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < x.length()) y[i] = x[i] * x[i] * x[i];
}
`

// The VJP kernel: inputs x, y, g; output dx = 3y/x·g (= 3x²·g).
const cubeVJPGLSL = `#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer Y { float y[]; };
layout(binding = 2) readonly buffer G { float g[]; };
layout(binding = 3) writeonly buffer D { float dx[]; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < x.length()) dx[i] = 3.0 * y[i] / x[i] * g[i];
}
`

func TestRegisterVJP(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, ops.Register("test.cube", ops.Kernel{GLSL: cubeGLSL, Inputs: 1}))
	t.Cleanup(func() { _ = ops.Unregister("test.cube") })
	require.NoError(t, ops.Register("test.cube_vjp", ops.Kernel{GLSL: cubeVJPGLSL, Inputs: 3}))
	t.Cleanup(func() { _ = ops.Unregister("test.cube_vjp") })

	info, err := ops.GradientOf("test.cube")
	require.NoError(t, err)
	assert.Equal(t, ops.GradPending, info.Kind)
	_, err = s.VJP("test.cube", nil, nil, nil, ops.Attrs{}, nil)
	assert.ErrorIs(t, err, ops.ErrNoGradient)

	require.NoError(t, ops.RegisterVJP("test.cube", ops.KernelVJP("test.cube_vjp")))
	info, err = ops.GradientOf("test.cube")
	require.NoError(t, err)
	assert.Equal(t, ops.GradVJP, info.Kind)

	x, err := tensor.FromSlice(m, []float32{1, -2, 3})
	require.NoError(t, err)
	y, err := tensor.New(m, tensor.Float32, []int{3})
	require.NoError(t, err)
	_, err = s.Call("test.cube", []*tensor.Tensor{x}, []*tensor.Tensor{y}, ops.Attrs{})
	require.NoError(t, err)
	g, err := tensor.FromSlice(m, []float32{1, 1, 0.5})
	require.NoError(t, err)
	gs, err := s.VJP("test.cube", []*tensor.Tensor{x}, []*tensor.Tensor{y}, []*tensor.Tensor{g}, ops.Attrs{}, nil)
	require.NoError(t, err)
	require.Len(t, gs, 1)
	require.NoError(t, gs[0].Wait(ctxT(t)))
	got, err := gs[0].Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 12, 13.5}, got)
	require.NoError(t, gs[0].Close())

	// A composition works too, and replaces the kernel rule.
	require.NoError(t, ops.RegisterVJP("test.cube", func(b *ops.GradBuilder) []*tensor.Tensor {
		x := b.In(0)
		x2 := b.Call("mul", ops.Attrs{}, x, x)
		return []*tensor.Tensor{b.Call("mul", ops.Attrs{}, b.Call("mul", ops.Attrs{}, x2, b.Const(tensor.Float32, 3)), b.Cot(0))}
	}))
	gs, err = s.VJP("test.cube", []*tensor.Tensor{x}, nil, []*tensor.Tensor{g}, ops.Attrs{}, nil)
	require.NoError(t, err)
	require.NoError(t, gs[0].Wait(ctxT(t)))
	got, err = gs[0].Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 12, 13.5}, got)
	require.NoError(t, gs[0].Close())

	// Refusals.
	assert.ErrorIs(t, ops.RegisterVJP("exp", ops.KernelVJP("test.cube_vjp")), vkflow.ErrInvalid)
	assert.ErrorIs(t, ops.RegisterVJP("nope", ops.KernelVJP("test.cube_vjp")), vkflow.ErrInvalid)
	assert.ErrorIs(t, ops.RegisterVJP("test.cube", nil), vkflow.ErrInvalid)

	// Unregister removes the rule with the kernel.
	require.NoError(t, ops.Unregister("test.cube"))
	require.NoError(t, ops.Register("test.cube", ops.Kernel{GLSL: cubeGLSL, Inputs: 1}))
	info, err = ops.GradientOf("test.cube")
	require.NoError(t, err)
	assert.Equal(t, ops.GradPending, info.Kind)
}

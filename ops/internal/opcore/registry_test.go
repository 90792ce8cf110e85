package opcore_test

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

const scaleGLSL = `#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer In { float x[]; };
layout(binding = 1) writeonly buffer Out { float y[]; };
layout(push_constant) uniform P { float k; uint n; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < n) y[i] = k * x[i];
}
`

func TestRegisterGLSL(t *testing.T) {
	m, _ := testutil.Manager(t)
	require.NoError(t, ops.Register("test.scale", ops.Kernel{GLSL: scaleGLSL, Inputs: 1}))
	t.Cleanup(func() { _ = ops.Unregister("test.scale") })
	assert.Contains(t, ops.Names(), "test.scale")

	x, err := tensor.FromSlice(m, []float32{1, 2, 3, -4, 5})
	require.NoError(t, err)
	y, err := tensor.New(m, tensor.Float32, []int{5})
	require.NoError(t, err)
	push := make([]byte, 8)
	binary.LittleEndian.PutUint32(push, math.Float32bits(2.5))
	binary.LittleEndian.PutUint32(push[4:], 5)
	outs, err := ops.Call(context.Background(), m, "test.scale", []*tensor.Tensor{x}, []*tensor.Tensor{y}, ops.Attrs{Push: push})
	require.NoError(t, err)
	require.Len(t, outs, 1)
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{2.5, 5, 7.5, -10, 12.5}, got)

	// Bad calls are clear errors.
	for _, tc := range []struct {
		name    string
		in, out []*tensor.Tensor
		at      ops.Attrs
		msg     string
	}{
		{"no outputs", []*tensor.Tensor{x}, nil, ops.Attrs{Push: push}, "outputs must all be given"},
		{"nil output", []*tensor.Tensor{x}, []*tensor.Tensor{nil}, ops.Attrs{Push: push}, "output 0 is nil"},
		{"short push", []*tensor.Tensor{x}, []*tensor.Tensor{y}, ops.Attrs{Push: push[:4]}, "push constants"},
		{"two inputs", []*tensor.Tensor{x, x}, []*tensor.Tensor{y}, ops.Attrs{Push: push}, "2 inputs, want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ops.Prepare(m, "test.scale", tc.in, tc.out, tc.at)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestRegisterErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    ops.Kernel
		msg  string
	}{
		{"bad name!", ops.Kernel{GLSL: scaleGLSL}, "name"},
		{"test.empty", ops.Kernel{}, "no GLSL source or SPIR-V"},
		{"test.both", ops.Kernel{GLSL: scaleGLSL, SPIRV: []byte{1, 2, 3, 4}}, "not both"},
		{"test.badspirv", ops.Kernel{SPIRV: []byte{1, 2, 3, 4}}, "test.badspirv"},
		{"test.inputs", ops.Kernel{GLSL: scaleGLSL, Inputs: 3}, "3 inputs"},
		{"test.syntax", ops.Kernel{GLSL: "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n\tfloat x = y;\n}\n"}, ":4:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ops.Register(tc.name, tc.k)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), tc.msg)
			assert.NotContains(t, ops.Names(), tc.name)
		})
	}
	require.NoError(t, ops.Register("test.dup", ops.Kernel{GLSL: scaleGLSL, Inputs: 1}))
	t.Cleanup(func() { _ = ops.Unregister("test.dup") })
	assert.ErrorIs(t, ops.Register("test.dup", ops.Kernel{GLSL: scaleGLSL, Inputs: 1}), vkflow.ErrInvalid)
	assert.ErrorIs(t, ops.Unregister("test.nothere"), vkflow.ErrInvalid)
	_, err := ops.Prepare(nil, "test.nothere", nil, nil, ops.Attrs{})
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
}

func TestParseAttrs(t *testing.T) {
	a, err := ops.ParseAttrs([]byte(`{"axes":[0,-1],"keepdims":true,"dtype":"float16","min":0,"max":6,"push":"AQID","groups":[4,1,1]}`))
	require.NoError(t, err)
	assert.Equal(t, []int{0, -1}, a.Axes)
	assert.True(t, a.KeepDims)
	assert.Equal(t, tensor.Float16, a.Dtype)
	assert.Equal(t, 0.0, *a.Min)
	assert.Equal(t, 6.0, *a.Max)
	assert.Equal(t, []byte{1, 2, 3}, a.Push)
	assert.Equal(t, [3]uint32{4, 1, 1}, a.Groups)
	for _, bad := range []string{`{"axis":0}`, `{"dtype":"float128"}`, `[1]`, `{"axes":"x"}`} {
		_, err := ops.ParseAttrs([]byte(bad))
		assert.ErrorIs(t, err, vkflow.ErrInvalid, bad)
	}
	a, err = ops.ParseAttrs(nil)
	require.NoError(t, err)
	assert.Equal(t, ops.Attrs{}, a)
}

package glsl_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/glsl"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// axpbSrc computes o[i] = a[i] * A + B over the first N elements, with the
// local size as specialization constant 0.
const axpbSrc = `#version 450
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer In { float a[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float o[]; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < N) {
		o[i] = a[i] * A + B;
	}
}
`

// TestDispatch builds algorithms from compiled modules and checks what one
// dispatch computes, under validation.
func TestDispatch(t *testing.T) {
	m, _ := testutil.Manager(t)
	tests := []struct {
		name  string
		n     int
		a, b  float32
		local uint32
		debug bool
	}{
		{"optimized", 1000, 2, 0.5, 64, false},
		{"one element", 1, -3, 1, 32, false},
		{"debug info", 4097, 0.25, -8, 128, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []glsl.Option{
				glsl.Name(tt.name + ".comp"),
				glsl.Define("N", itoa(tt.n)+"u"),
				glsl.Define("A", ftoa(tt.a)),
				glsl.Define("B", ftoa(tt.b)),
			}
			if tt.debug {
				opts = append(opts, glsl.Debug())
			}
			code, err := glsl.Compile(axpbSrc, opts...)
			require.NoError(t, err)

			in := make([]float32, tt.n)
			for i := range in {
				in[i] = float32(i%97) - 40
			}
			a, err := tensor.FromSlice(m, in)
			require.NoError(t, err)
			defer a.Close()
			o, err := tensor.FromSlice(m, make([]float32, tt.n))
			require.NoError(t, err)
			defer o.Close()
			algo, err := algorithm.New(m, code, []*tensor.Tensor{a, o}, algorithm.Spec(0, tt.local))
			require.NoError(t, err)
			defer algo.Close()
			assert.Equal(t, [3]uint32{tt.local, 1, 1}, algo.LocalSize())
			assert.Equal(t, algorithm.ReadOnly, algo.Access(0))
			assert.Equal(t, algorithm.WriteOnly, algo.Access(1))

			seq, err := sequence.New(m, 0)
			require.NoError(t, err)
			defer seq.Close()
			require.NoError(t, seq.Dispatch(algo).SyncLocal(o).Eval(context.Background()))
			got, err := o.Float32s()
			require.NoError(t, err)
			want := make([]float32, tt.n)
			for i, v := range in {
				want[i] = v*tt.a + tt.b // exact: small integers times powers of two
			}
			assert.Equal(t, want, got)
		})
	}
}

func itoa(n int) string     { return strconv.Itoa(n) }
func ftoa(f float32) string { return strconv.FormatFloat(float64(f), 'f', -1, 32) }

package ops_test

import (
	"context"
	"testing"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/glsl"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

const copyVec4GLSL = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer X { vec4 x[]; };
layout(binding = 1) writeonly buffer Y { vec4 y[]; };
void main() { y[gl_GlobalInvocationID.x] = x[gl_GlobalInvocationID.x]; }
`

// BenchmarkSum16M sums 16M float32 (ops.Sum over every axis, Run: submit
// and wait, warm) against a baseline in the same run: a vec4 copy kernel
// over the same tensor, submitted and waited the same way. MB/s counts the
// bytes each moves: the sum reads 64 MiB, the copy reads and writes 64
// MiB; the goal is sum >= 0.8x the copy's bandwidth.
func BenchmarkSum16M(b *testing.B) {
	m, err := vkflow.New(vkflow.WithValidation(false))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const n = 16 << 20
	x, err := tensor.New(m, tensor.Float32, []int{n})
	if err != nil {
		b.Fatal(err)
	}
	xs, err := x.Float32s()
	if err != nil {
		b.Fatal(err)
	}
	for k := range xs {
		xs[k] = float32(k%1000) / 1000
	}
	ctx := context.Background()

	b.Run("copy_vec4", func(b *testing.B) {
		y, err := tensor.New(m, tensor.Float32, []int{n})
		if err != nil {
			b.Fatal(err)
		}
		defer y.Close()
		code, err := glsl.Compile(copyVec4GLSL)
		if err != nil {
			b.Fatal(err)
		}
		a, err := algorithm.New(m, code, []*tensor.Tensor{x, y}, algorithm.Workgroups(n/4/256, 1, 1))
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		s, err := sequence.New(m, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		s.Dispatch(a)
		if err := s.Eval(ctx); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(2 * 4 * n)
		b.ResetTimer()
		for range b.N {
			if err := s.Eval(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sum", func(b *testing.B) {
		op, err := ops.Sum(m, x, nil, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer op.Out().Close()
		defer op.Close()
		if err := op.Run(ctx); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(4 * n)
		b.ResetTimer()
		for range b.N {
			if err := op.Run(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

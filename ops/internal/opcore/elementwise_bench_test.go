package opcore_test

import (
	"context"
	"testing"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// BenchmarkMul16M compares ops.Mul (the generated vec4 kernel) with
// kernels.Multiply (the hand-written vec4 SPIR-V the C baseline also
// runs) on 16Mi float32s, each a pre-recorded sequence of one dispatch,
// submit + wait, in the same run: compare their ns/op as a ratio.
// ops.Mul/broadcast multiplies [4Mi, 4] by [4] (the strided kernel) and
// fuse runs (a*b)*b as one fused kernel.
func BenchmarkMul16M(b *testing.B) {
	m, err := vkflow.New()
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const n = 16 << 20
	newT := func(shape ...int) *tensor.Tensor {
		t, err := tensor.New(m, tensor.Float32, shape)
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	x, y, out, row := newT(n), newT(n), newT(n), newT(4)
	x4, out4 := newT(n/4, 4), newT(n/4, 4)
	ctx := context.Background()
	bench := func(name string, record func(*sequence.Sequence) *sequence.Sequence) {
		s, err := sequence.New(m, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if err := record(s).Err(); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for range 3 {
				if err := s.Eval(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(3 * 4 * n)
			for b.Loop() {
				if err := s.Eval(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	alg, err := kernels.Multiply(m, x, y, out)
	if err != nil {
		b.Fatal(err)
	}
	defer alg.Close()
	bench("kernels.Multiply", func(s *sequence.Sequence) *sequence.Sequence { return s.Dispatch(alg) })
	for _, c := range []struct {
		name string
		op   func() (*ops.Op, error)
	}{
		{"ops.Mul", func() (*ops.Op, error) { return ops.Mul(m, x, y, out) }},
		{"ops.Mul/broadcast", func() (*ops.Op, error) { return ops.Mul(m, x4, row, out4) }},
		{"ops.Fuse", func() (*ops.Op, error) {
			return ops.Fuse(m, ops.Apply("mul", ops.Apply("mul", ops.Input(x), ops.Input(y)), ops.Input(y)), out)
		}},
	} {
		op, err := c.op()
		if err != nil {
			b.Fatal(err)
		}
		defer op.Close()
		bench(c.name, op.Record)
	}
}

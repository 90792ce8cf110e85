package opcore_test

import (
	"context"
	"testing"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// BenchmarkPromotedAdd4M compares int8 + int32 over 4M elements promoted
// in the add kernel (one dispatch) with an explicit Cast of the int8 input
// followed by add (two dispatches and a 16 MiB temporary).
func BenchmarkPromotedAdd4M(b *testing.B) {
	m, err := vkflow.New()
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const n = 4 << 20
	newT := func(dt tensor.Dtype) *tensor.Tensor {
		t, err := tensor.New(m, dt, []int{n})
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	x8, y32, tmp, out := newT(tensor.Int8), newT(tensor.Int32), newT(tensor.Int32), newT(tensor.Int32)
	build := func(f func() (*ops.Op, error)) *ops.Op {
		op, err := f()
		if err != nil {
			b.Fatal(err)
		}
		return op
	}
	promoted := build(func() (*ops.Op, error) { return ops.Add(m, x8, y32, out) })
	defer promoted.Close()
	cast := build(func() (*ops.Op, error) { return ops.Cast(m, x8, tensor.Int32, tmp) })
	defer cast.Close()
	add := build(func() (*ops.Op, error) { return ops.Add(m, tmp, y32, out) })
	defer add.Close()
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		ops  []*ops.Op
	}{{"promoted", []*ops.Op{promoted}}, {"cast+add", []*ops.Op{cast, add}}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := sequence.New(m, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for _, op := range bc.ops {
				op.Record(s)
			}
			if err := s.Err(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(n * 9)
			b.ResetTimer()
			for range b.N {
				if err := s.Eval(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

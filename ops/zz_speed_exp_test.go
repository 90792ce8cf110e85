package ops_test

import (
	"context"
	"testing"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

func BenchmarkExpSync(b *testing.B) {
	m, err := vkflow.New()
	if err != nil {
		b.Skip(err)
	}
	defer m.Close()
	s, _ := ops.DefaultStream(m)
	x, _ := tensor.New(m, tensor.Float32, []int{1000})
	y, _ := tensor.New(m, tensor.Float32, []int{1000})
	buf := make([]byte, 4000)
	ctx := context.Background()
	for _, mode := range []string{"new", "given", "allocOnly"} {
		b.Run(mode, func(b *testing.B) {
			o, _ := tensor.New(m, tensor.Float32, []int{1000})
			defer o.Close()
			for i := 0; i < b.N; i++ {
				if mode == "allocOnly" {
					t, _ := tensor.New(m, tensor.Float32, []int{1000})
					t.Close()
					continue
				}
				var out []*tensor.Tensor
				if mode == "given" {
					out = []*tensor.Tensor{o}
				}
				outs, err := s.Call("add", []*tensor.Tensor{x, y}, out, ops.Attrs{})
				if err != nil {
					b.Fatal(err)
				}
				if err := outs[0].Wait(ctx); err != nil {
					b.Fatal(err)
				}
				if err := outs[0].ReadBytes(buf); err != nil {
					b.Fatal(err)
				}
				if mode == "new" {
					outs[0].Close()
				}
			}
		})
	}
}

func BenchmarkExpChain(b *testing.B) {
	m, err := vkflow.New()
	if err != nil {
		b.Skip(err)
	}
	defer m.Close()
	s, _ := ops.DefaultStream(m)
	x, _ := tensor.New(m, tensor.Float32, []int{1000})
	y, _ := tensor.New(m, tensor.Float32, []int{1000})
	cur := x
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		outs, err := s.Call("add", []*tensor.Tensor{cur, y}, nil, ops.Attrs{})
		if err != nil {
			b.Fatal(err)
		}
		if cur != x {
			cur.Close()
		}
		cur = outs[0]
		if i%1000 == 999 {
			s.Synchronize(context.Background())
		}
	}
	s.Synchronize(context.Background())
}

package opcore_test

import (
	"context"
	"testing"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// BenchmarkStreamSync is the eager sync loop in Go: a 1,000-float add on
// the default stream, then a read of its output (Wait + ReadBytes). The
// metric call-ns/op is the host time of Stream.Call alone, which the GPU's
// and the wait's noise does not reach.
func BenchmarkStreamSync(b *testing.B) {
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
	var last *tensor.Tensor
	var inCall time.Duration
	in := []*tensor.Tensor{x, y}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		outs, err := s.Call("add", in, nil, ops.Attrs{})
		inCall += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if err := outs[0].Wait(ctx); err != nil {
			b.Fatal(err)
		}
		if err := outs[0].ReadBytes(buf); err != nil {
			b.Fatal(err)
		}
		if last != nil {
			last.Close()
		}
		last = outs[0]
	}
	b.ReportMetric(float64(inCall.Nanoseconds())/float64(b.N), "call-ns/op")
}

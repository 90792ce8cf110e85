package opcore_test

import (
	"context"
	"testing"
	"time"

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
// over the same tensor, submitted and waited the same way. Each iteration
// runs both, one after the other, so they share the machine's noise.
// Metrics: each one's milliseconds and GB/s (the sum reads 64 MiB, the
// copy reads and writes 64 MiB), and bw-ratio, the sum's bandwidth over
// the copy's (the goal: >= 0.8).
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
	if err := tensor.Write(x, xs); err != nil {
		b.Fatal(err)
	}
	y, err := tensor.New(m, tensor.Float32, []int{n})
	if err != nil {
		b.Fatal(err)
	}
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
	op, err := ops.Sum(m, x, nil, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	ctx := context.Background()
	if err := s.Eval(ctx); err != nil {
		b.Fatal(err)
	}
	if err := op.Run(ctx); err != nil {
		b.Fatal(err)
	}
	var tc, ts time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := s.Eval(ctx); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := op.Run(ctx); err != nil {
			b.Fatal(err)
		}
		tc, ts = tc+t1.Sub(t0), ts+time.Since(t1)
	}
	copyS, sumS := tc.Seconds()/float64(b.N), ts.Seconds()/float64(b.N)
	b.ReportMetric(copyS*1e3, "copy-ms")
	b.ReportMetric(sumS*1e3, "sum-ms")
	b.ReportMetric(2*4*n/copyS/1e9, "copy-GB/s")
	b.ReportMetric(4*n/sumS/1e9, "sum-GB/s")
	b.ReportMetric((4*n/sumS)/(2*4*n/copyS), "bw-ratio")
}

package opcore_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// mlpStep is one training step's forward pass of a two-layer MLP:
// loss = mean((tanh(x·w1)·w2 - y)²), as (op, input indices, attrs); the
// inputs are x, w1, w2, y, then each record's output in turn.
var mlpStep = []struct {
	op string
	in []int
	at ops.Attrs
}{
	{"matmul", []int{0, 1}, ops.Attrs{}}, // 4: x·w1
	{"tanh", []int{4}, ops.Attrs{}},      // 5
	{"matmul", []int{5, 2}, ops.Attrs{}}, // 6
	{"sub", []int{6, 3}, ops.Attrs{}},    // 7
	{"mul", []int{7, 7}, ops.Attrs{}},    // 8
	{"mean", []int{8}, ops.Attrs{}},      // 9: the loss
}

// BenchmarkMLPGrad times a forward and backward step of mlpStep (batch
// 256, 64 → 128 → 10, float32): as a recorded graph and its Tape.Grad
// backward graph replayed, and eagerly (Stream.Call forward, Stream.VJP
// backward, one Synchronize), in the same run. bench/grad.sh reports the
// ratio and PyTorch's CPU time for the same step. The graph case also
// reports the backward graph's memory: bytes allocated and bytes its ops
// took from dead buffers instead; graph-noreuse is the same without the
// reuse (the backward graph before it).
func BenchmarkMLPGrad(b *testing.B) {
	m, _ := testutil.Manager(b)
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(1, 1))
	mk := func(shape ...int) *tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rnd.Float64()*2-1) * 0.3
		}
		t, err := tensor.FromSlice(m, v, shape...)
		require.NoError(b, err)
		b.Cleanup(func() { _ = t.Close() })
		return t
	}
	x, w1, w2, y := mk(256, 64), mk(64, 128), mk(128, 10), mk(256, 10)
	one, err := tensor.New(m, tensor.Float32, []int{})
	require.NoError(b, err)
	require.NoError(b, tensor.Write(one, []float32{1}))
	b.Cleanup(func() { _ = one.Close() })

	graphStep := func(b *testing.B) {
		g, err := graph.New(m)
		require.NoError(b, err)
		tp, err := ops.NewTape(m, g)
		require.NoError(b, err)
		vals := []*tensor.Tensor{x, w1, w2, y}
		for _, r := range mlpStep {
			in := make([]*tensor.Tensor, len(r.in))
			for i, k := range r.in {
				in[i] = vals[k]
			}
			out, err := tp.Call1(r.op, r.at, in...)
			require.NoError(b, err)
			vals = append(vals, out)
		}
		g.Input(x, w1, w2, y)
		bw, err := tp.Grad([]*tensor.Tensor{vals[len(vals)-1]}, []*tensor.Tensor{one}, []*tensor.Tensor{w1, w2})
		require.NoError(b, err)
		fwd, err := g.Compile()
		require.NoError(b, err)
		bwd, err := bw.Graph.Compile()
		require.NoError(b, err)
		defer tp.Close()
		defer bwd.Close()
		defer fwd.Close()
		b.ResetTimer()
		for range b.N {
			if err := fwd.Run(ctx); err != nil {
				b.Fatal(err)
			}
			if err := bwd.Run(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(bw.AllocatedBytes), "bw-alloc-B")
		b.ReportMetric(float64(bw.ReusedBytes), "bw-reused-B")
	}
	b.Run("graph", graphStep)
	b.Run("graph-noreuse", func(b *testing.B) {
		defer opcore.SetGradPoolOff(true)()
		graphStep(b)
	})
	b.Run("eager", func(b *testing.B) {
		s, err := ops.NewStream(m)
		require.NoError(b, err)
		defer s.Close()
		for range b.N {
			if err := eagerStep(s, x, w1, w2, y, one); err != nil {
				b.Fatal(err)
			}
			if err := s.Synchronize(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// eagerStep runs mlpStep forward on s, then each op's VJP in reverse,
// summing cotangents, and closes what it made.
func eagerStep(s *ops.Stream, x, w1, w2, y, one *tensor.Tensor) error {
	vals := []*tensor.Tensor{x, w1, w2, y}
	var made []*tensor.Tensor
	defer func() {
		for _, t := range made {
			_ = t.Close()
		}
	}()
	for _, r := range mlpStep {
		in := make([]*tensor.Tensor, len(r.in))
		for i, k := range r.in {
			in[i] = vals[k]
		}
		out, err := s.Call(r.op, in, nil, r.at)
		if err != nil {
			return err
		}
		made = append(made, out[0])
		vals = append(vals, out[0])
	}
	cot := map[int]*tensor.Tensor{len(vals) - 1: one}
	for k := len(mlpStep) - 1; k >= 0; k-- {
		r := mlpStep[k]
		g := cot[4+k]
		if g == nil {
			continue
		}
		in := make([]*tensor.Tensor, len(r.in))
		wants := make([]bool, len(r.in))
		for i, j := range r.in {
			in[i] = vals[j]
			wants[i] = j != 0 && j != 3 // x and y need no gradient
		}
		gs, err := s.VJP(r.op, in, []*tensor.Tensor{vals[4+k]}, []*tensor.Tensor{g}, r.at, wants)
		if err != nil {
			return err
		}
		for i, gi := range gs {
			if gi == nil {
				continue
			}
			made = append(made, gi)
			j := r.in[i]
			if prev := cot[j]; prev != nil {
				sum, err := s.Call("add", []*tensor.Tensor{prev, gi}, nil, ops.Attrs{})
				if err != nil {
					return err
				}
				made = append(made, sum[0])
				gi = sum[0]
			}
			cot[j] = gi
		}
	}
	return nil
}

package bench

// Workloads recorded once into one command buffer (by a sequence, later by a
// graph) and replayed: one iteration submits all of it and waits.
//
//	seq_chain1000_onecmdbuf  the chain1000 dispatches (1000 x saxpy on one y)
//	                         in one sequence on logical queue 0, which puts
//	                         a narrow barrier on y between consecutive
//	                         dispatches; Eval per chain. C side:
//	                         chain1000_cmdbuf (bench/report pairs them)
//	seq_wide8_onecmdbuf      8 independent saxpy dispatches, one per y of
//	                         256Ki floats, in one sequence on queue 0 (no
//	                         barrier between them: they share only x, which
//	                         none writes); Eval per iteration. C side:
//	                         wide8_cmdbuf
//
// To add a replayed workload, add its builder to chainReplays or
// wideReplays: BenchmarkGo runs it under its name, after verifying it once
// exactly (TestBenchSmoke too, on small sizes).

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

const (
	wideN     = 256 << 10 // floats per y of the wide workloads (the C side's WIDE_N)
	wideWidth = 8         // independent dispatches (the C side's WIDE_WIDTH)
)

// run executes a recorded workload once and waits for it.
type run func(context.Context) error

// chainReplays record a chain of n dependent saxpy dispatches (y += x) over
// the x and y of a chainEnv.
var chainReplays = []struct {
	name  string
	build func(m *vkflow.Manager, e *chainEnv, n int) (run, error)
}{
	{"seq_chain1000_onecmdbuf", func(m *vkflow.Manager, e *chainEnv, n int) (run, error) {
		return oneSequence(m, n, func(int) *algorithm.Algorithm { return e.saxpy })
	}},
	{"graph_chain1000", func(m *vkflow.Manager, e *chainEnv, n int) (run, error) {
		return graphChain(m, e.x, e.saxpy, n)
	}},
}

// wideReplays record the wide DAG of a wideEnv: one saxpy per y, all
// independent.
var wideReplays = []struct {
	name  string
	build func(m *vkflow.Manager, e *wideEnv) (run, error)
}{
	{"seq_wide8_onecmdbuf", func(m *vkflow.Manager, e *wideEnv) (run, error) {
		return oneSequence(m, len(e.saxpy), func(i int) *algorithm.Algorithm { return e.saxpy[i] })
	}},
	{"graph_wide8_1q", func(m *vkflow.Manager, e *wideEnv) (run, error) { return graphWide(m, e, graph.PlaceSpread, 0) }},
	{"graph_wide8_2q", func(m *vkflow.Manager, e *wideEnv) (run, error) { return graphWide(m, e, graph.PlaceSpread, 0, 1) }},
	{"graph_wide8_2q_bycost", func(m *vkflow.Manager, e *wideEnv) (run, error) {
		return graphWide(m, e, graph.PlaceByCost, 0, 1)
	}},
}

// oneSequence records Dispatch(algo(i), alpha = 1) for i < n into one
// sequence on logical queue 0 and returns its Eval.
func oneSequence(m *vkflow.Manager, n int, algo func(int) *algorithm.Algorithm) (run, error) {
	s, err := sequence.New(m, 0)
	if err != nil {
		return nil, err
	}
	for i := range n {
		s.Dispatch(algo(i), float32(1))
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return s.Eval, nil
}

// addReplays records every chainReplays entry as a chain of n dispatches;
// verifyAll checks them.
func (e *chainEnv) addReplays(m *vkflow.Manager, n int) error {
	e.replays = e.replays[:0]
	for _, r := range chainReplays {
		f, err := r.build(m, e, n)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		e.replays = append(e.replays, f)
	}
	return nil
}

// wideEnv is the wide8 setup: x (n ones), wideWidth buffers y[i] of n
// floats and a saxpy (y[i] += alpha*x) over each, and the replayed
// workloads of wideReplays.
type wideEnv struct {
	x       *tensor.Tensor
	y       []*tensor.Tensor
	saxpy   []*algorithm.Algorithm
	sync    *sequence.Sequence // SyncLocal(y...): verification only
	replays []run              // wideReplays, in order
}

func newWideEnv(m *vkflow.Manager, n int) (*wideEnv, error) {
	e := &wideEnv{}
	var err error
	if e.x, err = tensor.FromSlice(m, filled(n, 1)); err != nil {
		return nil, err
	}
	for range wideWidth {
		y, err := tensor.New(m, tensor.Float32, []int{n})
		if err != nil {
			return nil, err
		}
		a, err := kernels.Saxpy(m, e.x, y)
		if err != nil {
			return nil, err
		}
		e.y, e.saxpy = append(e.y, y), append(e.saxpy, a)
	}
	if e.sync, err = sequence.New(m, 0); err != nil {
		return nil, err
	}
	if err = e.sync.SyncLocal(e.y...).Err(); err != nil {
		return nil, err
	}
	for _, r := range wideReplays {
		f, err := r.build(m, e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		e.replays = append(e.replays, f)
	}
	return e, nil
}

// verifyAll runs each replayed workload once from y[i] = i, so that a
// dispatch on the wrong buffer shows, and checks y[i] == i+1 exactly.
func (e *wideEnv) verifyAll(ctx context.Context) error {
	for k, r := range wideReplays {
		for i, y := range e.y {
			if err := tensor.Write(y, filled(y.Len(), float32(i))); err != nil {
				return err
			}
		}
		if err := e.replays[k](ctx); err != nil {
			return err
		}
		if err := e.sync.Eval(ctx); err != nil {
			return err
		}
		for i, y := range e.y {
			if err := checkAll(fmt.Sprintf("%s y[%d]", r.name, i), y, float32(i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// filled returns n copies of v.
func filled(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// checkAll checks that every element of t is exactly want.
func checkAll(what string, t *tensor.Tensor, want float32) error {
	got, err := t.Float32s()
	if err != nil {
		return err
	}
	for i, v := range got {
		if v != want {
			return fmt.Errorf("%s: verification failed at %d: got %.9g want %.9g", what, i, v, want)
		}
	}
	return nil
}

package vkflow_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// TestCloseOrderProperty is the closing-order property test (issue 19):
// each round builds a random DAG of submits (sequences, and graph runs one
// time in four) on 2 or 3 logical queues, all held behind one gate
// timeline and submitted in a random order (so a consumer is often
// accepted before its producer), closes a random subset of the sequences,
// Execs, algorithms, tensors and timelines while every submit is still
// held, then signals the gate. Every submit must complete, every tensor
// left open must equal a CPU model bit for bit, the queues must go on
// working (an empty Eval on each), and once everything is closed the live
// allocations must be back to the baseline. closeOrderRounds rounds: 50 in
// make test, 1,000 in make soak.
func TestCloseOrderProperty(t *testing.T) {
	rounds := closeOrderRounds
	if testing.Short() {
		rounds = 10
	}
	for _, nq := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d queues", nq), func(t *testing.T) {
			m, _ := testutil.Manager(t, vkflow.WithQueues(nq, false))
			base := m.MemStats().Allocations
			for round := range rounds / 2 {
				seed := uint64(nq)<<32 | uint64(round)
				closeOrderRound(t, m, nq, seed)
				requireBaseline(t, m, nq, base, seed)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// closeOrderLen is each tensor's length: odd, so the kernels take their
// scalar paths as well as the vector ones (through different lengths
// elsewhere).
const closeOrderLen = 61

type coTensor struct {
	t     *tensor.Tensor
	model []float32
	kind  tensor.Memory
	open  bool
}

// coOp is one recorded operation of a submit.
type coOp struct {
	kind     int // 0 fill, 1 copy, 2 add, 3 saxpy
	a, b, c  int // tensor indices (fill: a; copy: a -> b; add: a + b -> c; saxpy: b += alpha*a)
	alpha, v float32
}

func (o coOp) reads() []int {
	switch o.kind {
	case 1:
		return []int{o.a}
	case 2:
		return []int{o.a, o.b}
	case 3:
		return []int{o.a, o.b}
	}
	return nil
}

func (o coOp) writes() int {
	switch o.kind {
	case 0:
		return o.a
	case 1:
		return o.b
	case 2:
		return o.c
	}
	return o.b
}

func (o coOp) apply(ts []*coTensor) {
	switch o.kind {
	case 0:
		for i := range ts[o.a].model {
			ts[o.a].model[i] = o.v
		}
	case 1:
		copy(ts[o.b].model, ts[o.a].model)
	case 2:
		x, y, out := ts[o.a].model, ts[o.b].model, ts[o.c].model
		for i := range out {
			out[i] = x[i] + y[i]
		}
	case 3:
		x, y := ts[o.a].model, ts[o.b].model
		for i := range y {
			y[i] += o.alpha * x[i]
		}
	}
}

// coSubmit is a sequence submit, or a graph run when exec is set.
type coSubmit struct {
	ops   []coOp
	queue int
	deps  []int // indices of earlier submits (in logical order) it waits for
	seq   *sequence.Sequence
	exec  *graph.Exec
	algos []*algorithm.Algorithm
	tl    *timeline.Timeline // signalled to 1 by this submit
	pend  sequence.Pending
	run   graph.Pending
}

func (s *coSubmit) wait(ctx context.Context) error {
	if s.exec != nil {
		return s.run.Wait(ctx)
	}
	return s.pend.Wait(ctx)
}

func (s *coSubmit) done() bool {
	if s.exec != nil {
		return s.run.Done()
	}
	return s.pend.Done()
}

func (s *coSubmit) close() {
	if s.exec != nil {
		s.exec.Close()
	} else {
		s.seq.Close()
	}
}

func closeOrderRound(t *testing.T, m *vkflow.Manager, nq int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x19))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %#x: "+format, append([]any{seed}, args...)...)
	}

	// Tensors with small integer values, so that every sum is exact.
	kinds := []tensor.Memory{tensor.Device, tensor.Host, tensor.Storage}
	ts := make([]*coTensor, 4+rng.IntN(4))
	for i := range ts {
		kind := kinds[rng.IntN(len(kinds))]
		x, err := tensor.New(m, tensor.Float32, []int{closeOrderLen}, tensor.In(kind))
		require.NoError(t, err)
		ts[i] = &coTensor{t: x, model: make([]float32, closeOrderLen), kind: kind, open: true}
		if kind != tensor.Storage {
			for k := range ts[i].model {
				ts[i].model[k] = float32(rng.IntN(8))
			}
			require.NoError(t, tensor.Write(x, ts[i].model))
		}
	}

	// A random DAG in logical order: each submit waits for every earlier
	// one it conflicts with (so the result is defined) and, now and then,
	// for an unrelated one; the roots wait for the gate.
	subs := make([]*coSubmit, 2+rng.IntN(6))
	for i := range subs {
		s := &coSubmit{queue: rng.IntN(nq)}
		for range 1 + rng.IntN(3) {
			s.ops = append(s.ops, randomOp(rng, len(ts)))
		}
		for j := range i {
			if conflicts(subs[j], s) || rng.IntN(8) == 0 {
				s.deps = append(s.deps, j)
			}
		}
		subs[i] = s
		for _, o := range s.ops {
			o.apply(ts)
		}
	}
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	defer gate.Close()

	// Record every submit: a sequence, or (one in four) a graph on the
	// submit's queue.
	for _, s := range subs {
		s.tl, err = timeline.New(m, 0)
		require.NoError(t, err)
		var g *graph.Graph
		if rng.IntN(4) == 0 {
			g, err = graph.New(m)
			require.NoError(t, err)
		} else {
			s.seq, err = sequence.New(m, s.queue)
			require.NoError(t, err)
		}
		for _, o := range s.ops {
			var a *algorithm.Algorithm
			var push []any
			switch o.kind {
			case 2:
				a, err = kernels.Add(m, ts[o.a].t, ts[o.b].t, ts[o.c].t)
			case 3:
				a, err = kernels.Saxpy(m, ts[o.a].t, ts[o.b].t)
				push = []any{o.alpha}
			}
			require.NoError(t, err)
			if a != nil {
				s.algos = append(s.algos, a)
			}
			switch {
			case g != nil && o.kind == 0:
				g.Fill(ts[o.a].t, o.v).OnQueue(s.queue)
			case g != nil && o.kind == 1:
				g.Copy(ts[o.a].t, ts[o.b].t).OnQueue(s.queue)
			case g != nil:
				g.Dispatch(a, push...).OnQueue(s.queue)
			case o.kind == 0:
				s.seq.Fill(ts[o.a].t, o.v)
			case o.kind == 1:
				s.seq.Copy(ts[o.a].t, ts[o.b].t)
			default:
				s.seq.Dispatch(a, push...)
			}
		}
		if g != nil {
			s.exec, err = g.Compile()
			require.NoError(t, err)
		} else {
			require.NoError(t, s.seq.Err())
		}
	}

	// Submit in a random order: everything is held behind the gate.
	for _, i := range rng.Perm(len(subs)) {
		s := subs[i]
		waits := []*timeline.Timeline{gate}
		if len(s.deps) > 0 {
			waits = waits[:0]
		}
		for _, j := range s.deps {
			waits = append(waits, subs[j].tl)
		}
		if s.exec != nil {
			opts := []graph.RunOption{graph.Signal(s.tl, 1)}
			for _, w := range waits {
				opts = append(opts, graph.Wait(w, 1))
			}
			s.run = s.exec.RunAsync(opts...)
			err = s.run.Err()
		} else {
			opts := []sequence.SubmitOption{sequence.Signal(s.tl, 1)}
			for _, w := range waits {
				opts = append(opts, sequence.Wait(w, 1))
			}
			s.pend = s.seq.Submit(ctx, opts...)
			err = s.pend.Err()
		}
		if err != nil {
			fail("submit %d: %v", i, err)
		}
	}
	for i, s := range subs {
		if s.done() {
			fail("submit %d ran before the gate", i)
		}
	}

	// Close a random subset of everything while it is all held.
	var closers []func() error
	for _, s := range subs {
		closers = append(closers, func() error { s.close(); return nil }, s.tl.Close)
		for _, a := range s.algos {
			closers = append(closers, a.Close)
		}
	}
	for _, x := range ts {
		closers = append(closers, func() error { x.open = false; return x.t.Close() })
	}
	rng.Shuffle(len(closers), func(i, j int) { closers[i], closers[j] = closers[j], closers[i] })
	for _, c := range closers[:rng.IntN(len(closers)+1)] {
		require.NoError(t, c())
	}

	require.NoError(t, gate.Signal(1))
	for i, s := range subs {
		if err := s.wait(ctx); err != nil {
			fail("submit %d after the gate: %v", i, err)
		}
	}
	for i, x := range ts {
		if !x.open {
			continue
		}
		got := readBack(t, m, x)
		for k := range got {
			if got[k] != x.model[k] {
				fail("tensor %d (%v) [%d] = %v, want %v", i, x.kind, k, got[k], x.model[k])
			}
		}
	}
	for _, s := range subs {
		s.close()
		s.tl.Close()
		for _, a := range s.algos {
			a.Close()
		}
	}
	for _, x := range ts {
		x.t.Close()
	}
}

func randomOp(rng *rand.Rand, n int) coOp {
	a, b, c := rng.IntN(n), rng.IntN(n), rng.IntN(n)
	for b == a {
		b = rng.IntN(n)
	}
	for c == a || c == b {
		c = rng.IntN(n)
	}
	alphas := []float32{-1, 1, 2}
	return coOp{kind: rng.IntN(4), a: a, b: b, c: c, alpha: alphas[rng.IntN(len(alphas))], v: float32(rng.IntN(8))}
}

// conflicts reports whether two submits touch one tensor, one of them
// writing it.
func conflicts(x, y *coSubmit) bool {
	for _, o := range x.ops {
		for _, p := range y.ops {
			if o.writes() == p.writes() || contains(o.reads(), p.writes()) || contains(p.reads(), o.writes()) {
				return true
			}
		}
	}
	return false
}

func contains(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// readBack returns x's values; Storage tensors are copied to a Device
// tensor first.
func readBack(t *testing.T, m *vkflow.Manager, x *coTensor) []float32 {
	t.Helper()
	src := x.t
	if x.kind == tensor.Storage {
		dst, err := tensor.New(m, tensor.Float32, []int{closeOrderLen})
		require.NoError(t, err)
		defer dst.Close()
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.Copy(src, dst).SyncLocal(dst).Eval(context.Background()))
		src = dst
	}
	got, err := src.Float32s()
	require.NoError(t, err)
	return append([]float32(nil), got...)
}

// requireBaseline checks that every queue still runs work and that, once
// the GPU is done, every allocation a round made is freed.
func requireBaseline(t *testing.T, m *vkflow.Manager, nq int, base int, seed uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for q := range nq {
		s, err := sequence.New(m, q)
		require.NoError(t, err)
		require.NoError(t, s.Eval(ctx), "seed %#x: an empty Eval on queue %d", seed, q)
		require.NoError(t, s.Close())
	}
	require.Eventually(t, func() bool {
		s, err := sequence.New(m, 0)
		if err != nil {
			return false
		}
		defer s.Close()
		return s.Eval(ctx) == nil && m.MemStats().Allocations == base
	}, 5*time.Second, time.Millisecond, "seed %#x: live allocations back to %d (now %d)", seed, base, m.MemStats().Allocations)
}

package bench

// BenchmarkGo/<workload> does exactly the work of BenchmarkC/<workload> in
// bench/baseline/baseline.c, so that bench/report can pair the two by name:
//
//	dispatch1024          pre-recorded one-dispatch sequence (mul.spv, 1024
//	                      floats, 16 workgroups of 64), submit + wait
//	empty_submit          a sequence with no operations: an empty submit that
//	                      only signals the queue's timeline, + wait
//	mul16m_e2e            16Mi floats: host copies into a and b, submit the
//	                      vec4 multiply + host barrier, wait, copy out back
//	mul16m_kernel_vec4    the mul16m_e2e sequence alone, submit + wait
//	mul16m_kernel_scalar  the same with mul.spv (split over the workgroup
//	                      limit), submit + wait
//	manager_create        vkflow.New + Close (instance, device, queue,
//	                      timeline), no validation, while another Manager
//	                      stays open as the C side's main context does
//	allocs_submit_wait    dispatch1024 again, reporting Go allocations
//	chain1000             1000 dependent saxpy dispatches (1024 floats),
//	                      alternating between sequences on logical queues 0
//	                      and 1, linked by one timeline (dispatch k waits for
//	                      base+k and signals base+k+1), one host wait at the
//	                      end; ns/op is per chain, ns/dispatch per dispatch
//	chain1000_eval        (Go only) the same 1000 dispatches with a host
//	                      wait after each (seq.Eval, Kompute's model)
//
// and the workloads recorded once into one command buffer and replayed,
// whose C sides have other names (onecmdbuf_test.go), and the graphs
// (graph_test.go): their 2-queue forms are compared with C doing the same
// hand-offs and with their 1-queue forms.
//
// Like the C side, every workload runs 3 warm-up iterations before the
// timer starts and verifies its results once against the CPU, outside the
// timing. Benchmarks never enable the validation layer; TestBenchSmoke runs
// every workload once on small sizes with validation on, as the rest of the
// suite does.

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

const (
	smallN       = 1024     // dispatch1024 (the C side's SMALL_N)
	bigN         = 16 << 20 // mul16m_* (the C side's BIG_N)
	bytesPerElem = 12       // read a and b, write out
	warmup       = 3        // the C side's WARMUP_ITERS
	chainLen     = 1000     // dispatches per chain (the C side's CHAIN_LEN)
)

// fillInputs is the C side's fill_inputs: deterministic inputs whose
// products are normal floats, so the GPU and the CPU agree bit for bit.
func fillInputs(a, b []float32) {
	for i := range a {
		h := uint32(i) * 2654435761
		a[i] = float32((h>>8)&0xFFFF)*(1.0/1024.0) - 32.0 + 0.3
		b[i] = float32((h>>16)&0x3FF)*0.01 + 0.5
	}
}

// verify checks out[i] == a[i]*b[i] exactly.
func verify(what string, a, b, out []float32) error {
	if len(out) != len(a) {
		return fmt.Errorf("%s: %d results for %d inputs", what, len(out), len(a))
	}
	for i := range out {
		if want := a[i] * b[i]; out[i] != want {
			return fmt.Errorf("%s: verification failed at %d: got %.9g want %.9g", what, i, out[i], want)
		}
	}
	return nil
}

// smallEnv is the dispatch1024 / empty_submit setup: three n-float tensors,
// the scalar multiply over them, a one-dispatch sequence (no SyncLocal: the
// C command buffer has no host barrier either) and an empty sequence.
type smallEnv struct {
	a, b, out *tensor.Tensor
	av, bv    []float32
	algo      *algorithm.Algorithm
	dispatch  *sequence.Sequence
	empty     *sequence.Sequence
}

func newSmallEnv(m *vkflow.Manager, n int) (*smallEnv, error) {
	e := &smallEnv{av: make([]float32, n), bv: make([]float32, n)}
	fillInputs(e.av, e.bv)
	var err error
	if e.a, err = tensor.FromSlice(m, e.av); err != nil {
		return nil, err
	}
	if e.b, err = tensor.FromSlice(m, e.bv); err != nil {
		return nil, err
	}
	if e.out, err = tensor.New(m, tensor.Float32, []int{n}); err != nil {
		return nil, err
	}
	if e.algo, err = kernels.MultiplyScalar(m, e.a, e.b, e.out); err != nil {
		return nil, err
	}
	if got, want := e.algo.Workgroups(), [3]uint32{uint32((n + 63) / 64), 1, 1}; got != want {
		return nil, fmt.Errorf("MultiplyScalar over %d floats: workgroups %v, want %v", n, got, want)
	}
	if e.dispatch, err = sequence.New(m, 0); err != nil {
		return nil, err
	}
	if err = e.dispatch.Dispatch(e.algo).Err(); err != nil {
		return nil, err
	}
	if e.empty, err = sequence.New(m, 0); err != nil {
		return nil, err
	}
	return e, nil
}

// verifyDispatch runs the dispatch once (building it) and checks out. Its
// sequence has no SyncLocal, so a host-read barrier is added with a
// separate one-op sequence, outside any timing.
func (e *smallEnv) verifyDispatch(ctx context.Context, m *vkflow.Manager) error {
	if err := e.dispatch.Eval(ctx); err != nil {
		return err
	}
	sync, err := sequence.New(m, 0)
	if err != nil {
		return err
	}
	defer sync.Close()
	if err := sync.SyncLocal(e.out).Eval(ctx); err != nil {
		return err
	}
	got, err := e.out.Float32s()
	if err != nil {
		return err
	}
	return verify("dispatch1024", e.av, e.bv, got)
}

// bigEnv is the mul16m_* setup: three n-float tensors holding the real
// inputs, the vec4 and scalar multiplies over them, a sequence for each
// (Dispatch + SyncLocal(out), the C side's dispatch + COMPUTE->HOST
// barrier), and the host arrays of mul16m_e2e.
type bigEnv struct {
	a, b, out          *tensor.Tensor
	hostA, hostB, res  []float32
	vec4, scalar       *algorithm.Algorithm
	vec4Seq, scalarSeq *sequence.Sequence
}

func newBigEnv(m *vkflow.Manager, n int) (*bigEnv, error) {
	if n%4 != 0 {
		return nil, fmt.Errorf("bigEnv: n=%d is not a multiple of 4", n)
	}
	e := &bigEnv{hostA: make([]float32, n), hostB: make([]float32, n), res: make([]float32, n)}
	fillInputs(e.hostA, e.hostB)
	var err error
	// Kernel-only workloads read whatever a and b hold: give them the real
	// inputs, as the C side does.
	if e.a, err = tensor.FromSlice(m, e.hostA); err != nil {
		return nil, err
	}
	if e.b, err = tensor.FromSlice(m, e.hostB); err != nil {
		return nil, err
	}
	if e.out, err = tensor.New(m, tensor.Float32, []int{n}); err != nil {
		return nil, err
	}
	if e.vec4, err = kernels.Multiply(m, e.a, e.b, e.out); err != nil {
		return nil, err
	}
	if got, want := e.vec4.LocalSize()[0], uint32(256); got != want {
		return nil, fmt.Errorf("Multiply over %d floats: local size %d, want the vec4 shader's %d", n, got, want)
	}
	if got, want := e.vec4.Workgroups(), [3]uint32{uint32(n / 4 / 256), 1, 1}; n%1024 == 0 && got != want {
		return nil, fmt.Errorf("Multiply over %d floats: workgroups %v, want %v", n, got, want)
	}
	if e.scalar, err = kernels.MultiplyScalar(m, e.a, e.b, e.out); err != nil {
		return nil, err
	}
	if e.vec4Seq, err = sequence.New(m, 0); err != nil {
		return nil, err
	}
	if err = e.vec4Seq.Dispatch(e.vec4).SyncLocal(e.out).Err(); err != nil {
		return nil, err
	}
	if e.scalarSeq, err = sequence.New(m, 0); err != nil {
		return nil, err
	}
	if err = e.scalarSeq.Dispatch(e.scalar).SyncLocal(e.out).Err(); err != nil {
		return nil, err
	}
	return e, nil
}

// e2e is one mul16m_e2e iteration: host arrays in, dispatch, result out.
func (e *bigEnv) e2e(ctx context.Context) error {
	if err := tensor.Write(e.a, e.hostA); err != nil {
		return err
	}
	if err := tensor.Write(e.b, e.hostB); err != nil {
		return err
	}
	if err := e.vec4Seq.Eval(ctx); err != nil {
		return err
	}
	out, err := e.out.Float32s()
	if err != nil {
		return err
	}
	copy(e.res, out)
	return nil
}

// verifyAll checks the e2e path (and so the vec4 sequence) and, from a
// cleared output, the scalar sequence.
func (e *bigEnv) verifyAll(ctx context.Context) error {
	clear(e.res)
	if err := e.e2e(ctx); err != nil {
		return err
	}
	if err := verify("mul16m_e2e", e.hostA, e.hostB, e.res); err != nil {
		return err
	}
	// Clear the output so a stale vec4 result cannot pass the check.
	if err := tensor.Write(e.out, make([]float32, e.out.Len())); err != nil {
		return err
	}
	if err := e.scalarSeq.Eval(ctx); err != nil {
		return err
	}
	got, err := e.out.Float32s()
	if err != nil {
		return err
	}
	return verify("mul16m_kernel_scalar", e.hostA, e.hostB, got)
}

// chainEnv is the chain1000 setup: x (n ones) and y (n floats), the saxpy
// kernel y += alpha*x over them, one sequence per logical queue (0 and 1)
// each recording Dispatch(saxpy, alpha = 1) once, and the timeline that
// links the dispatches. With x = alpha = 1 every dispatch adds exactly 1 to
// every element of y and reads the previous dispatch's result, so the
// dispatches depend on each other and after k of them from zero y == k.
type chainEnv struct {
	x, y  *tensor.Tensor
	saxpy *algorithm.Algorithm
	seqs  [2]*sequence.Sequence // logical queues 0 and 1
	sync  *sequence.Sequence    // SyncLocal(y): verification only
	tl    *timeline.Timeline
	value uint64 // the last value signalled on tl (by the last chain)
	// replays are the chainReplays, in order (addReplays).
	replays []run
}

// newChainEnv needs a Manager with two logical compute queues (on lavapipe
// both map to its one queue).
func newChainEnv(m *vkflow.Manager, n int) (*chainEnv, error) {
	e := &chainEnv{}
	var err error
	if e.x, err = tensor.FromSlice(m, filled(n, 1)); err != nil {
		return nil, err
	}
	if e.y, err = tensor.New(m, tensor.Float32, []int{n}); err != nil {
		return nil, err
	}
	if e.saxpy, err = kernels.Saxpy(m, e.x, e.y); err != nil {
		return nil, err
	}
	if got, want := e.saxpy.Workgroups(), [3]uint32{uint32((n + 63) / 64), 1, 1}; got != want {
		return nil, fmt.Errorf("Saxpy over %d floats: workgroups %v, want %v", n, got, want)
	}
	for q := range e.seqs {
		if e.seqs[q], err = sequence.New(m, q); err != nil {
			return nil, err
		}
		if err = e.seqs[q].Dispatch(e.saxpy, float32(1)).Err(); err != nil {
			return nil, err
		}
	}
	if e.sync, err = sequence.New(m, 0); err != nil {
		return nil, err
	}
	if err = e.sync.SyncLocal(e.y).Err(); err != nil {
		return nil, err
	}
	if e.tl, err = timeline.New(m, 0); err != nil {
		return nil, err
	}
	return e, nil
}

// chain submits n dispatches without waiting, dispatch k on logical queue
// k%2, waiting on the GPU for the timeline at base+k and signalling base+k+1,
// then waits once on the host for the last one.
func (e *chainEnv) chain(ctx context.Context, n int) error {
	for k := range n {
		v := e.value
		p := e.seqs[k%2].Submit(ctx, sequence.Wait(e.tl, v), sequence.Signal(e.tl, v+1))
		if err := p.Err(); err != nil {
			return fmt.Errorf("chain dispatch %d: %w", k, err)
		}
		e.value = v + 1
	}
	return e.tl.Wait(ctx, e.value)
}

// evalChain runs the same n dispatches, alternating the two sequences, with
// a host wait after each (seq.Eval): no timeline, the host orders them.
func (e *chainEnv) evalChain(ctx context.Context, n int) error {
	for k := range n {
		if err := e.seqs[k%2].Eval(ctx); err != nil {
			return fmt.Errorf("eval chain dispatch %d: %w", k, err)
		}
	}
	return nil
}

// verify clears y, runs run (n dispatches) and checks y == n exactly.
func (e *chainEnv) verify(ctx context.Context, what string, n int, run func(context.Context, int) error) error {
	if err := tensor.Write(e.y, make([]float32, e.y.Len())); err != nil {
		return err
	}
	if err := run(ctx, n); err != nil {
		return err
	}
	if err := e.sync.Eval(ctx); err != nil {
		return err
	}
	return checkAll(what, e.y, float32(n))
}

// verifyAll checks both chains of n dispatches and the replayed ones
// (recorded with n dispatches).
func (e *chainEnv) verifyAll(ctx context.Context, n int) error {
	if err := e.verify(ctx, "chain", n, e.chain); err != nil {
		return err
	}
	if err := e.verify(ctx, "eval chain", n, e.evalChain); err != nil {
		return err
	}
	for k, r := range chainReplays {
		replay := func(ctx context.Context, _ int) error { return e.replays[k](ctx) }
		if err := e.verify(ctx, r.name, n, replay); err != nil {
			return err
		}
	}
	return nil
}

// perDispatch reports the benchmark's time per dispatch, ns/op being per
// chain of chainLen dispatches. Call it after the b.Loop.
func perDispatch(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/chainLen, "ns/dispatch")
}

// openBench opens a benchmark Manager: never with validation.
func openBench(b *testing.B, opts ...vkflow.Option) *vkflow.Manager {
	b.Helper()
	if v := os.Getenv("VKFLOW_VALIDATION"); v != "" && v != "0" {
		b.Fatalf("VKFLOW_VALIDATION=%s: benchmarks must run without the validation layer (unset it)", v)
	}
	m, err := vkflow.New(append(opts, vkflow.WithValidation(false))...)
	if err != nil {
		b.Fatalf("vkflow.New: %v", err)
	}
	return m
}

// group lazily opens one Manager and its setup, shared by the benchmarks of
// one group, and closes it when the group is done.
type group[E any] struct {
	name  string
	opts  []vkflow.Option // for the Manager, besides WithValidation(false)
	m     *vkflow.Manager
	env   E
	err   error
	setup func(context.Context, *vkflow.Manager) (E, error)
}

func (g *group[E]) get(b *testing.B) E {
	b.Helper()
	if g.m == nil && g.err == nil {
		g.m = openBench(b, g.opts...)
		g.env, g.err = g.setup(context.Background(), g.m)
	}
	if g.err != nil {
		b.Fatalf("%s setup: %v", g.name, g.err)
	}
	return g.env
}

func (g *group[E]) close(b *testing.B) {
	if g.m == nil {
		return
	}
	if err := g.m.Close(); err != nil {
		b.Errorf("%s: Manager.Close: %v", g.name, err)
	}
	g.m = nil
}

// loop runs warm-up iterations, then f in a b.Loop; any error is fatal.
func loop(b *testing.B, f func() error) {
	b.Helper()
	for range warmup {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGo(b *testing.B) {
	ctx := context.Background()

	small := &group[*smallEnv]{name: "small", setup: func(ctx context.Context, m *vkflow.Manager) (*smallEnv, error) {
		e, err := newSmallEnv(m, smallN)
		if err != nil {
			return nil, err
		}
		return e, e.verifyDispatch(ctx, m)
	}}
	b.Run("dispatch1024", func(b *testing.B) {
		e := small.get(b)
		loop(b, func() error { return e.dispatch.Eval(ctx) })
	})
	b.Run("allocs_submit_wait", func(b *testing.B) {
		e := small.get(b)
		b.ReportAllocs()
		for range warmup {
			if err := e.dispatch.Eval(ctx); err != nil {
				b.Fatal(err)
			}
		}
		// allocs/op is rounded down to an integer; also report the exact
		// average, so an occasional allocation cannot hide.
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			if err := e.dispatch.Eval(ctx); err != nil {
				b.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "exact-allocs/op")
	})
	b.Run("empty_submit", func(b *testing.B) {
		e := small.get(b)
		loop(b, func() error { return e.empty.Eval(ctx) })
	})
	small.close(b)

	big := &group[*bigEnv]{name: "big", setup: func(ctx context.Context, m *vkflow.Manager) (*bigEnv, error) {
		e, err := newBigEnv(m, bigN)
		if err != nil {
			return nil, err
		}
		return e, e.verifyAll(ctx)
	}}
	b.Run("mul16m_e2e", func(b *testing.B) {
		e := big.get(b)
		b.SetBytes(bytesPerElem * bigN)
		loop(b, func() error { return e.e2e(ctx) })
	})
	b.Run("mul16m_kernel_vec4", func(b *testing.B) {
		e := big.get(b)
		b.SetBytes(bytesPerElem * bigN)
		loop(b, func() error { return e.vec4Seq.Eval(ctx) })
	})
	b.Run("mul16m_kernel_scalar", func(b *testing.B) {
		e := big.get(b)
		b.SetBytes(bytesPerElem * bigN)
		loop(b, func() error { return e.scalarSeq.Eval(ctx) })
	})
	big.close(b)

	chain := &group[*chainEnv]{name: "chain", opts: []vkflow.Option{vkflow.WithQueues(2, false)},
		setup: func(ctx context.Context, m *vkflow.Manager) (*chainEnv, error) {
			e, err := newChainEnv(m, smallN)
			if err != nil {
				return nil, err
			}
			if err := e.addReplays(m, chainLen); err != nil {
				return nil, err
			}
			return e, e.verifyAll(ctx, chainLen)
		}}
	b.Run("chain1000", func(b *testing.B) {
		e := chain.get(b)
		loop(b, func() error { return e.chain(ctx, chainLen) })
		perDispatch(b)
	})
	b.Run("chain1000_eval", func(b *testing.B) {
		e := chain.get(b)
		loop(b, func() error { return e.evalChain(ctx, chainLen) })
		perDispatch(b)
	})
	for k, r := range chainReplays {
		b.Run(r.name, func(b *testing.B) {
			f := chain.get(b).replays[k]
			loop(b, func() error { return f(ctx) })
			perDispatch(b)
		})
	}
	chain.close(b)

	wide := &group[*wideEnv]{name: "wide", opts: []vkflow.Option{vkflow.WithQueues(2, false)},
		setup: func(ctx context.Context, m *vkflow.Manager) (*wideEnv, error) {
			e, err := newWideEnv(m, wideN)
			if err != nil {
				return nil, err
			}
			return e, e.verifyAll(ctx)
		}}
	for k, r := range wideReplays {
		b.Run(r.name, func(b *testing.B) {
			f := wide.get(b).replays[k]
			loop(b, func() error { return f(ctx) })
		})
	}
	wide.close(b)

	diamond := &group[*diamondEnv]{name: "diamond", opts: []vkflow.Option{vkflow.WithQueues(2, false)},
		setup: func(ctx context.Context, m *vkflow.Manager) (*diamondEnv, error) {
			e, err := newDiamondEnv(m, diamondN)
			if err != nil {
				return nil, err
			}
			return e, e.verifyAll(ctx)
		}}
	for k, d := range diamondQueues {
		b.Run(d.name, func(b *testing.B) {
			f := diamond.get(b).runs[k]
			loop(b, func() error { return f(ctx) })
		})
	}
	diamond.close(b)

	b.Run("manager_create", func(b *testing.B) {
		// The C side creates and destroys its devices while its main
		// context (instance and device) stays open, so the Vulkan loader
		// keeps the driver libraries loaded; hold a Manager open likewise.
		// Without one, every New reloads all the installed drivers (about
		// 10ms more here, LLVM-linked lavapipe included).
		held := openBench(b)
		defer held.Close()
		loop(b, func() error {
			m, err := vkflow.New(vkflow.WithValidation(false))
			if err != nil {
				return err
			}
			return m.Close()
		})
	})
}

// TestBenchSmoke runs every benchmark workload once on small sizes, with
// validation on (testutil fails the test on any validation message), so
// that go test ./... exercises the benchmark code quickly.
func TestBenchSmoke(t *testing.T) {
	ctx := context.Background()
	m, _ := testutil.Manager(t)

	s, err := newSmallEnv(m, smallN)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.verifyDispatch(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.empty.Eval(ctx); err != nil {
		t.Fatal("empty_submit:", err)
	}

	// 4096 floats: the vec4 shader, 4 workgroups.
	g, err := newBigEnv(m, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.verifyAll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.vec4Seq.Eval(ctx); err != nil {
		t.Fatal("mul16m_kernel_vec4:", err)
	}
	if _, err := newBigEnv(m, 4094); err == nil {
		t.Fatal("newBigEnv accepted a length that is not a multiple of 4")
	}

	// chain1000 and chain1000_eval as 10-dispatch chains, on two logical
	// queues.
	cm, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	c, err := newChainEnv(cm, smallN)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.addReplays(cm, 10); err != nil {
		t.Fatal(err)
	}
	if err := c.verifyAll(ctx, 10); err != nil {
		t.Fatal(err)
	}
	// Again: the timeline values go on increasing from the last chain.
	if err := c.verify(ctx, "second chain", 10, c.chain); err != nil {
		t.Fatal(err)
	}
	if c.value != 20 {
		t.Fatalf("timeline at %d after two 10-dispatch chains, want 20", c.value)
	}

	// The wide replays over 32Ki floats per y: more work per dispatch than
	// a wait between queues costs (graph's estimate), so the 2-queue graph
	// spreads.
	w, err := newWideEnv(cm, 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.verifyAll(ctx); err != nil {
		t.Fatal(err)
	}

	// The diamonds over 128Ki floats per tensor (add does 4 per
	// invocation): enough work per branch for the 2-queue graph to spread.
	d, err := newDiamondEnv(cm, 128<<10)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.verifyAll(ctx); err != nil {
		t.Fatal(err)
	}

	// manager_create, without validation like the benchmark.
	mc, err := vkflow.New(vkflow.WithValidation(false))
	if err != nil {
		t.Fatal("manager_create:", err)
	}
	if err := mc.Close(); err != nil {
		t.Fatal("manager_create: Close:", err)
	}
}

package sequence_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// Kompute #238: A and B are independent, C needs both; only C is read back,
// with one host wait.
func TestDAG(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx := context.Background()
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	a, err := tensor.New(m, tensor.Float32, []int{4})
	require.NoError(t, err)
	b, err := tensor.New(m, tensor.Float32, []int{4})
	require.NoError(t, err)
	c, err := tensor.New(m, tensor.Float32, []int{4})
	require.NoError(t, err)
	sq, err := kernels.Multiply(m, x, x, a) // a = x*x
	require.NoError(t, err)
	dbl, err := kernels.Add(m, x, x, b) // b = x+x
	require.NoError(t, err)
	sum, err := kernels.Add(m, a, b, c) // c = a+b
	require.NoError(t, err)
	ta, err := timeline.New(m, 0)
	require.NoError(t, err)
	tb, err := timeline.New(m, 0)
	require.NoError(t, err)
	tc, err := timeline.New(m, 0)
	require.NoError(t, err)
	seqA, err := sequence.New(m, 0)
	require.NoError(t, err)
	seqB, err := sequence.New(m, 1)
	require.NoError(t, err)
	seqC, err := sequence.New(m, 0)
	require.NoError(t, err)
	seqA.Dispatch(sq)
	seqB.Dispatch(dbl)
	seqC.Dispatch(sum).SyncLocal(c)

	// C is submitted first: it is held until A and B are submitted.
	pc := seqC.Submit(ctx, sequence.Wait(ta, 1), sequence.Wait(tb, 1), sequence.Signal(tc, 1))
	require.NoError(t, pc.Err())
	assert.False(t, pc.Done())
	require.NoError(t, seqB.Submit(ctx, sequence.Signal(tb, 1)).Err())
	require.NoError(t, seqA.Submit(ctx, sequence.Signal(ta, 1)).Err())
	require.NoError(t, tc.Wait(ctx, 1))
	require.NoError(t, pc.Wait(ctx))
	got, err := c.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 8, 15, 24}, got)
}

// lavapipe deadlocks when a wait reaches the driver before its signal on
// the same queue; the scheduler holds it back instead.
func TestWaitBeforeSignalOnOneQueue(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	y, err := tensor.FromSlice(m, []float32{0})
	require.NoError(t, err)
	one, err := tensor.FromSlice(m, []float32{1})
	require.NoError(t, err)
	inc, err := kernels.Saxpy(m, one, y)
	require.NoError(t, err)
	tls := make([]*timeline.Timeline, 6)
	for i := range tls {
		tls[i], err = timeline.New(m, 0)
		require.NoError(t, err)
	}
	var ps []sequence.Pending
	// Step i waits for step i-1 (timeline i-1) and signals timeline i; the
	// steps are submitted last first, all to lavapipe's one queue.
	for i := 5; i >= 1; i-- {
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		s.Dispatch(inc, float32(i)).SyncLocal(y) // y += i
		opts := []sequence.SubmitOption{sequence.Signal(tls[i], 1)}
		if i > 1 {
			opts = append(opts, sequence.Wait(tls[i-1], 1))
		}
		ps = append(ps, s.Submit(ctx, opts...))
		if i > 1 {
			assert.False(t, ps[len(ps)-1].Done(), "held: step %d is not submitted yet", i-1)
		}
	}
	for _, p := range ps {
		require.NoError(t, p.Err())
	}
	ctx5, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, tls[5].Wait(ctx5, 1))
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{15}, got)
}

func TestValuesMustIncreaseInSubmits(t *testing.T) {
	m, _ := testutil.Manager(t)
	other, _ := testutil.Manager(t)
	ctx := context.Background()
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	foreign, err := timeline.New(other, 0)
	require.NoError(t, err)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, s.Submit(ctx, sequence.Signal(tl, 3)).Wait(ctx))
	tests := []struct {
		name string
		opts []sequence.SubmitOption
		is   error
	}{
		{"same value", []sequence.SubmitOption{sequence.Signal(tl, 3)}, vkflow.ErrInvalid},
		{"lower value", []sequence.SubmitOption{sequence.Signal(tl, 1)}, vkflow.ErrInvalid},
		{"twice in one submit", []sequence.SubmitOption{sequence.Signal(tl, 5), sequence.Signal(tl, 4)}, vkflow.ErrInvalid},
		{"foreign timeline", []sequence.SubmitOption{sequence.Wait(foreign, 1)}, vkflow.ErrInvalid},
		{"nil timeline", []sequence.SubmitOption{sequence.Wait(nil, 1)}, vkflow.ErrInvalid},
		{"zero wait stage", []sequence.SubmitOption{sequence.WaitStage(0)}, vkflow.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := s.Submit(ctx, tt.opts...)
			assert.ErrorIs(t, p.Err(), tt.is)
			assert.ErrorIs(t, p.Wait(ctx), tt.is)
		})
	}
	assert.ErrorIs(t, tl.Signal(3), vkflow.ErrInvalid, "a host signal must increase too")
	require.NoError(t, tl.Signal(4))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, s.Submit(cancelled).Err(), context.Canceled)
}

// A submit waiting on a point nobody signals does not hang the program:
// Wait returns the context's error and Close reports it.
func TestStuckSubmit(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	x, err := tensor.FromSlice(m, []float32{1, 2})
	require.NoError(t, err)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	p := s.Fill(x, float32(0)).Submit(ctx, sequence.Wait(tl, 1))
	require.NoError(t, p.Err())
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, p.Wait(short), context.DeadlineExceeded)
	assert.False(t, p.Done())
	assert.ErrorIs(t, s.Clear(), vkflow.ErrPending)
	assert.Len(t, m.Runtime().Held(), 1)

	err = m.Close()
	var stuck *vkflow.StuckError
	require.True(t, errors.As(err, &stuck), "got %v", err)
	assert.False(t, stuck.Leaked, "never submitted, so its memory could be freed")
	assert.Contains(t, err.Error(), "never submitted")
	assert.ErrorIs(t, p.Wait(ctx), vkflow.ErrClosed)
}

// Everything a held submit uses stays alive until it completes, even when
// closed before it is released.
func TestHeldSubmitKeepsResourcesAlive(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	y, err := tensor.FromSlice(m, []float32{1, 1, 1, 1})
	require.NoError(t, err)
	out, err := tensor.New(m, tensor.Float32, []int{4})
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	done, err := timeline.New(m, 0)
	require.NoError(t, err)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	p := s.Dispatch(saxpy, float32(10)).Copy(y, out).SyncLocal(out).
		Submit(ctx, sequence.Wait(gate, 1), sequence.Signal(done, 1))
	require.NoError(t, p.Err())
	for _, c := range []interface{ Close() error }{s, saxpy, x, y, done} {
		require.NoError(t, c.Close())
	}
	require.NoError(t, gate.Signal(1))
	require.NoError(t, p.Wait(ctx))
	got, err := out.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 21, 31, 41}, got)
}

// The stress test: goroutines submit random DAGs over 3 timelines and 2
// logical queues in shuffled order; every result is checked by value.
// VKFLOW_SOAK=1 runs a longer soak.
func TestStressRandomDAGs(t *testing.T) {
	jobs := 10000
	if testing.Short() {
		jobs = 1000
	}
	if os.Getenv("VKFLOW_SOAK") != "" {
		jobs = 100000
	}
	const timelines, goroutines = 3, 8
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := rand.New(rand.NewPCG(42, uint64(jobs)))

	// Jobs in a topological order g: job g runs on timeline k at value v,
	// waits for (k, v-1) and maybe for an earlier job of another timeline.
	type job struct {
		k, v   int
		xk, xv int // cross dependency, xv 0 for none
		queue  int
	}
	count := make([]int, timelines)
	var byTimeline [timelines][]job
	var all []job
	for g := 0; g < jobs; g++ {
		k := r.IntN(timelines)
		count[k]++
		j := job{k: k, v: count[k], queue: r.IntN(2)}
		if len(all) > 0 && r.IntN(2) == 0 {
			e := all[r.IntN(len(all))]
			if e.k != k {
				j.xk, j.xv = e.k, e.v
			}
		}
		all = append(all, j)
		byTimeline[k] = append(byTimeline[k], j)
	}
	// Submission order: a random interleaving that keeps each timeline's
	// signals increasing; cross waits often point at later submits.
	var order []job
	next := make([]int, timelines)
	for len(order) < jobs {
		k := r.IntN(timelines)
		if next[k] < len(byTimeline[k]) {
			order = append(order, byTimeline[k][next[k]])
			next[k]++
		}
	}

	tls := make([]*timeline.Timeline, timelines)
	acc := make([]*tensor.Tensor, timelines)
	logs := make([]*tensor.Tensor, timelines)  // value of acc[k] before job (k, v)
	xlogs := make([]*tensor.Tensor, timelines) // value of acc[xk] seen by job (k, v)
	one, err := tensor.FromSlice(m, []float32{1})
	require.NoError(t, err)
	saxpys := make([]*algorithm.Algorithm, timelines)
	for k := range tls {
		tls[k], err = timeline.New(m, 0)
		require.NoError(t, err)
		acc[k], err = tensor.FromSlice(m, []float32{0})
		require.NoError(t, err)
		logs[k], err = tensor.New(m, tensor.Float32, []int{count[k] + 1})
		require.NoError(t, err)
		xlogs[k], err = tensor.New(m, tensor.Float32, []int{count[k] + 1})
		require.NoError(t, err)
		saxpys[k], err = kernels.Saxpy(m, one, acc[k])
		require.NoError(t, err)
	}

	// Goroutine i submits order[j] for j ≡ i (mod goroutines), in order,
	// after the previous signal of the same timeline was accepted.
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	accepted := make([]int, timelines)
	var wg sync.WaitGroup
	pendings := make([]sequence.Pending, jobs)
	errs := make(chan error, goroutines)
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := i; j < len(order); j += goroutines {
				jb := order[j]
				mu.Lock()
				for accepted[jb.k] != jb.v-1 {
					cond.Wait()
				}
				mu.Unlock()
				s, err := sequence.New(m, jb.queue)
				if err != nil {
					errs <- err
					return
				}
				s.Copy(acc[jb.k], logs[jb.k], sequence.Region{Src: 0, Dst: jb.v, Len: 1})
				opts := []sequence.SubmitOption{sequence.Signal(tls[jb.k], uint64(jb.v))}
				if jb.v > 1 {
					opts = append(opts, sequence.Wait(tls[jb.k], uint64(jb.v-1)))
				}
				if jb.xv > 0 {
					s.Copy(acc[jb.xk], xlogs[jb.k], sequence.Region{Src: 0, Dst: jb.v, Len: 1})
					opts = append(opts, sequence.Wait(tls[jb.xk], uint64(jb.xv)))
				}
				s.Dispatch(saxpys[jb.k], float32(1))
				pendings[j] = s.Submit(ctx, opts...)
				if err := pendings[j].Err(); err != nil {
					errs <- err
					return
				}
				if err := s.Close(); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				accepted[jb.k] = jb.v
				cond.Broadcast()
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	points := make([]timeline.Point, timelines)
	for k := range tls {
		points[k] = timeline.Point{Timeline: tls[k], Value: uint64(count[k])}
	}
	require.NoError(t, timeline.WaitAll(ctx, points...), "held: %v", m.Runtime().Held())
	for _, p := range pendings {
		require.NoError(t, p.Wait(ctx))
	}
	for k := range tls {
		a, err := acc[k].Float32s()
		require.NoError(t, err)
		assert.Equal(t, float32(count[k]), a[0], "timeline %d ran every job once", k)
		l, err := logs[k].Float32s()
		require.NoError(t, err)
		xl, err := xlogs[k].Float32s()
		require.NoError(t, err)
		for _, jb := range byTimeline[k] {
			require.Equal(t, float32(jb.v-1), l[jb.v], "job (%d, %d) ran after its predecessor", k, jb.v)
			if jb.xv > 0 {
				require.GreaterOrEqual(t, xl[jb.v], float32(jb.xv), "job (%d, %d) ran after (%d, %d)", k, jb.v, jb.xk, jb.xv)
			}
		}
	}
}

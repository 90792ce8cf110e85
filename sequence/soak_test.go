package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// The soak: soakWorkers goroutines submit soakSubmits sequences in all
// (soak_size_test.go: 100,000 with -tags soak, a few thousand otherwise) on
// 2 logical queues. Each goroutine owns a pool of tensors and a timeline;
// its sequences are random lists of fills, copies and saxpy dispatches
// (y += x or y -= x) over the pool, chained by its timeline, and many also
// wait for a point another goroutine already submitted, so the submits form
// a DAG across goroutines and queues. Meanwhile pool tensors are closed and
// recreated while GPU work on them may be in flight. A CPU model of each pool
// runs the same operations in float32; the GPU results must match it bit
// for bit (alpha*x is exact for alpha = ±1, so a fused multiply-add rounds
// as the CPU does). Finally every goroutine submits a burst without waiting
// and the Manager is closed with that work in flight: Close must succeed or
// return a *StuckError.
const (
	soakWorkers = 8
	soakPool    = 4   // tensors per goroutine
	soakLen     = 64  // elements per tensor
	soakCheck   = 250 // compare with the model every soakCheck submits
	soakBound   = 1 << 20
)

type soakWorker struct {
	m     *vkflow.Manager
	r     *rand.Rand
	tl    *timeline.Timeline
	saxpy *algorithm.Algorithm
	pool  [soakPool]*tensor.Tensor
	model [soakPool][]float32
	v     uint64 // last value submitted on tl
	last  sequence.Pending
}

func (w *soakWorker) fresh(i int) error {
	vals := make([]float32, soakLen)
	for k := range vals {
		vals[k] = float32(w.r.IntN(17) - 8)
	}
	t, err := tensor.FromSlice(w.m, vals)
	if err != nil {
		return err
	}
	w.pool[i], w.model[i] = t, vals
	return nil
}

func (w *soakWorker) big(i int) bool {
	for _, x := range w.model[i] {
		if math.Abs(float64(x)) > soakBound {
			return true
		}
	}
	return false
}

// record appends 1 to 5 random operations to s and applies them to the
// model.
func (w *soakWorker) record(s *sequence.Sequence) error {
	for range 1 + w.r.IntN(5) {
		a, b := w.r.IntN(soakPool), w.r.IntN(soakPool-1)
		if b >= a {
			b++ // b != a
		}
		switch op := w.r.IntN(3); {
		case op == 0 || w.big(a) || w.big(b):
			v := float32(w.r.IntN(9) - 4)
			s.Fill(w.pool[b], v)
			for k := range w.model[b] {
				w.model[b][k] = v
			}
		case op == 1:
			n := 1 + w.r.IntN(soakLen)
			src, dst := w.r.IntN(soakLen-n+1), w.r.IntN(soakLen-n+1)
			s.Copy(w.pool[a], w.pool[b], sequence.Region{Src: src, Dst: dst, Len: n})
			copy(w.model[b][dst:dst+n], w.model[a][src:src+n])
		default:
			alpha := float32(1 - 2*w.r.IntN(2))
			if err := w.saxpy.Bind(w.pool[a], w.pool[b]); err != nil {
				return err
			}
			s.Dispatch(w.saxpy, alpha)
			for k := range w.model[b] {
				w.model[b][k] = alpha*w.model[a][k] + w.model[b][k]
			}
		}
	}
	return s.Err()
}

// check waits for the last submit and compares every pool tensor with the
// model, bit for bit.
func (w *soakWorker) check(ctx context.Context) error {
	if err := w.last.Wait(ctx); err != nil {
		return err
	}
	for i, t := range w.pool {
		got, err := t.Float32s()
		if err != nil {
			return err
		}
		for k := range got {
			if math.Float32bits(got[k]) != math.Float32bits(w.model[i][k]) {
				return fmt.Errorf("soak: pool tensor %d element %d = %v, the CPU model has %v (after submit %d)", i, k, got[k], w.model[i][k], w.v)
			}
		}
	}
	return nil
}

func TestSoak(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	start := time.Now()
	workers := make([]*soakWorker, soakWorkers)
	submitted := make([]atomic.Uint64, soakWorkers) // last value each worker submitted
	for g := range workers {
		w := &soakWorker{m: m, r: rand.New(rand.NewPCG(7, uint64(g)))}
		var err error
		w.tl, err = timeline.New(m, 0)
		require.NoError(t, err)
		for i := range w.pool {
			require.NoError(t, w.fresh(i))
		}
		w.saxpy, err = kernels.Saxpy(m, w.pool[0], w.pool[1])
		require.NoError(t, err)
		workers[g] = w
	}

	// submit records one random sequence of w and submits it on a random
	// queue after w's previous one, maybe also after a point another
	// worker submitted already.
	submit := func(g int) error {
		w := workers[g]
		s, err := sequence.New(m, w.r.IntN(2))
		if err != nil {
			return err
		}
		if err := w.record(s); err != nil {
			s.Close()
			return err
		}
		opts := []sequence.SubmitOption{sequence.Signal(w.tl, w.v+1)}
		if w.v > 0 {
			opts = append(opts, sequence.Wait(w.tl, w.v))
		}
		if o := w.r.IntN(soakWorkers); o != g && w.r.IntN(2) == 0 {
			if v := submitted[o].Load(); v > 0 {
				opts = append(opts, sequence.Wait(workers[o].tl, 1+w.r.Uint64N(v)))
			}
		}
		p := s.Submit(ctx, opts...)
		if err := p.Err(); err != nil {
			s.Close()
			return err
		}
		w.v++
		w.last = p
		submitted[g].Store(w.v)
		return s.Close()
	}

	per := soakSubmits / soakWorkers
	var wg sync.WaitGroup
	errs := make([]error, soakWorkers)
	for g := range workers {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			w := workers[g]
			for n := 1; n <= per; n++ {
				if errs[g] = submit(g); errs[g] != nil {
					return
				}
				// Close and recreate a pool tensor, often with its last
				// uses still in flight.
				if w.r.IntN(50) == 0 {
					i := w.r.IntN(soakPool)
					if errs[g] = w.pool[i].Close(); errs[g] != nil {
						return
					}
					if errs[g] = w.fresh(i); errs[g] != nil {
						return
					}
				}
				if n%soakCheck == 0 || n == per {
					if errs[g] = w.check(ctx); errs[g] != nil {
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	for g, err := range errs {
		require.NoError(t, err, "worker %d", g)
	}
	t.Logf("soak: %d submits by %d goroutines on 2 queues, bit-exact, in %v", per*soakWorkers, soakWorkers, time.Since(start).Round(time.Millisecond))

	// A last burst left in flight, then Close.
	for g := range workers {
		for range 20 {
			require.NoError(t, submit(g))
		}
	}
	err := m.Close()
	var stuck *vkflow.StuckError
	if err != nil && !errors.As(err, &stuck) {
		t.Fatalf("Close with work in flight: %v", err)
	}
	for g, w := range workers {
		if err == nil {
			require.True(t, w.last.Done(), "worker %d: Close returned before its work completed", g)
		}
	}
}

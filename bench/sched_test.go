package bench

// BenchmarkSched measures the hold-back scheduler: how long it takes to
// accept n submits that are all held and then release them with one host
// signal. Every submit is an empty sequence (no commands), so the time is
// the scheduler's work plus one vkQueueSubmit per submit; the GPU's own
// execution is waited for outside the timer.
//
//	reverse/<n>  a chain accepted back to front: submit k waits for
//	             timeline k at the iteration's value and signals timeline
//	             k+1 to it; submits are accepted for k = n-1 down to 0, then
//	             the host signals timeline 0 and the whole chain is released,
//	             one submit making the next ready. (A reverse chain needs a
//	             timeline per link: submits that signal one timeline are
//	             released in the order they were accepted.)
//	forward/<n>  a chain on one timeline, accepted front to back, held
//	             behind a host gate: submit 0 waits for the gate, submit k
//	             waits for the value submit k-1 signals.
//
// ns/submit is the figure to compare: a scheduler whose release is linear
// in the number of held submits shows the same ns/submit at every n. These
// run a few iterations per size (-benchtime 3x, `make bench`); they are not
// part of bench/run.sh's comparison with the C baseline.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/timeline"
)

// schedSizes are the chain lengths. Each Manager's held limit is set to the
// chain length, so the limit itself is exercised at its edge.
var schedSizes = []int{1000, 10000, 100000}

// schedEnv holds what one chain length needs across iterations: the
// timelines are created once, and every iteration signals the next value.
type schedEnv struct {
	m     *vkflow.Manager
	seq   *sequence.Sequence
	tls   []*timeline.Timeline // reverse: n+1 timelines; forward: gate, chain
	value uint64               // the last iteration's value
}

func newSchedEnv(m *vkflow.Manager, timelines int) (*schedEnv, error) {
	e := &schedEnv{m: m}
	var err error
	if e.seq, err = sequence.New(m, 0); err != nil {
		return nil, err
	}
	for range timelines {
		tl, err := timeline.New(m, 0)
		if err != nil {
			return nil, err
		}
		e.tls = append(e.tls, tl)
	}
	return e, nil
}

// reverse accepts the chain back to front and releases it; it returns the
// point the last submit signals.
func (e *schedEnv) reverse(ctx context.Context, n int) (timeline.Point, error) {
	e.value++
	v := e.value
	for k := n - 1; k >= 0; k-- {
		p := e.seq.Submit(ctx, sequence.Wait(e.tls[k], v), sequence.Signal(e.tls[k+1], v))
		if err := p.Err(); err != nil {
			return timeline.Point{}, fmt.Errorf("submit %d: %w", k, err)
		}
	}
	if err := e.tls[0].Signal(v); err != nil {
		return timeline.Point{}, err
	}
	return timeline.Point{Timeline: e.tls[n], Value: v}, nil
}

// forward accepts the chain front to back behind the gate and releases it.
func (e *schedEnv) forward(ctx context.Context, n int) (timeline.Point, error) {
	e.value++
	gate, chain := e.tls[0], e.tls[1]
	base := (e.value - 1) * uint64(n)
	for k := 0; k < n; k++ {
		w := sequence.Wait(chain, base+uint64(k))
		if k == 0 {
			w = sequence.Wait(gate, e.value)
		}
		p := e.seq.Submit(ctx, w, sequence.Signal(chain, base+uint64(k)+1))
		if err := p.Err(); err != nil {
			return timeline.Point{}, fmt.Errorf("submit %d: %w", k, err)
		}
	}
	if err := gate.Signal(e.value); err != nil {
		return timeline.Point{}, err
	}
	return timeline.Point{Timeline: chain, Value: base + uint64(n)}, nil
}

func BenchmarkSched(b *testing.B) {
	ctx := context.Background()
	for _, kind := range []string{"reverse", "forward"} {
		for _, n := range schedSizes {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				tls, run := n+1, (*schedEnv).reverse
				if kind == "forward" {
					tls, run = 2, (*schedEnv).forward
				}
				m, err := vkflow.New(vkflow.WithValidation(false), vkflow.WithMaxHeldSubmits(n))
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				e, err := newSchedEnv(m, tls)
				if err != nil {
					b.Fatal(err)
				}
				var spent time.Duration
				for b.Loop() {
					start := time.Now()
					last, err := run(e, ctx, n)
					spent += time.Since(start)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					wctx, cancel := context.WithTimeout(ctx, time.Minute)
					err = last.Timeline.Wait(wctx, last.Value)
					cancel()
					if err != nil {
						b.Fatalf("chain of %d not completed: %v (held: %d)", n, err, len(e.m.Runtime().Held()))
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N)/float64(n), "ns/submit")
			})
		}
	}
}

// TestSchedBenchSmoke runs both chains once on a small size, under
// validation, and checks that they complete.
func TestSchedBenchSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, kind := range []string{"reverse", "forward"} {
		n := 50
		tls, run := n+1, (*schedEnv).reverse
		if kind == "forward" {
			tls, run = 2, (*schedEnv).forward
		}
		m, _ := testutil.Manager(t)
		e, err := newSchedEnv(m, tls)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			last, err := run(e, ctx, n)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if err := last.Timeline.Wait(ctx, last.Value); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
		}
	}
}

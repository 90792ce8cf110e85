package core

import (
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// notify kicks the goroutine of every queue where a newly deferred object
// still has a use to wait for, unless that goroutine already waits for a
// value at or below the use; an object idle already gets queue 0's kicked.
// With several physical queues an object idle on one queue and pending on
// another must wake the other's goroutine (lavapipe has one queue, so
// only this test covers it). No driver is needed.
func TestWatcherNotify(t *testing.T) {
	cases := []struct {
		name      string
		kind      Kind
		uses      [2]uint64 // last use per queue
		completed [2]uint64
		idled     [2]uint64
		targets   [2]uint64 // what each goroutine waits for (0: a kick)
		kicked    [2]bool
	}{
		{"both queues idle goroutines", KindTensor, [2]uint64{5, 7}, [2]uint64{}, [2]uint64{}, [2]uint64{}, [2]bool{true, true}},
		{"queue 0 covered, queue 1 kicked", KindTensor, [2]uint64{5, 7}, [2]uint64{}, [2]uint64{}, [2]uint64{3, 0}, [2]bool{false, true}},
		{"queue 1 covered at its own value", KindTensor, [2]uint64{5, 7}, [2]uint64{}, [2]uint64{}, [2]uint64{5, 7}, [2]bool{false, false}},
		{"a later target does not cover", KindTensor, [2]uint64{5, 0}, [2]uint64{}, [2]uint64{}, [2]uint64{6, 0}, [2]bool{true, false}},
		{"done on queue 0, pending on queue 1", KindTensor, [2]uint64{5, 7}, [2]uint64{5, 2}, [2]uint64{}, [2]uint64{0, 0}, [2]bool{false, true}},
		{"idle already: queue 0 collects", KindTensor, [2]uint64{5, 7}, [2]uint64{5, 7}, [2]uint64{}, [2]uint64{9, 9}, [2]bool{true, false}},
		{"timeline waits for the next batch", KindTimeline, [2]uint64{5, 0}, [2]uint64{5, 0}, [2]uint64{}, [2]uint64{6, 0}, [2]bool{false, false}},
		{"timeline not covered at its own value", KindTimeline, [2]uint64{5, 0}, [2]uint64{4, 0}, [2]uint64{}, [2]uint64{0, 0}, [2]bool{true, false}},
		{"timeline retired by an idle", KindTimeline, [2]uint64{5, 0}, [2]uint64{5, 0}, [2]uint64{5, 0}, [2]uint64{3, 3}, [2]bool{true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &Device{Log: slog.New(slog.DiscardHandler)}
			for i := range 2 {
				q := &Queue{dev: d, Index: i}
				q.submitted.Store(10)
				q.completed.Store(c.completed[i])
				q.idled.Store(c.idled[i])
				d.queues = append(d.queues, q)
				qw := &queueWatch{q: q, kick: make(chan struct{}, 1)}
				qw.target.Store(c.targets[i])
				d.watch.queues = append(d.watch.queues, qw)
			}
			o := &Object{dev: d, kind: c.kind, uses: make([]atomic.Uint64, 2)}
			for i, v := range c.uses {
				o.MarkUse(i, v)
			}
			d.watch.notify(d, o)
			for i, qw := range d.watch.queues {
				assert.Equal(t, c.kicked[i], len(qw.kick) == 1, "queue %d kicked", i)
			}
		})
	}
}

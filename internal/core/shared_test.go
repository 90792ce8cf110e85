package core

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Waits on a shared timeline (exported or imported) are never held back:
// another process signals it, which the scheduler cannot see. Signals keep
// their order rule on every timeline. Only accept runs here, so no driver
// is needed.
func TestSharedTimelineWaits(t *testing.T) {
	type wait struct {
		tl    int // index into the test's timelines: 0 local, 1 shared, 2 exportable
		value uint64
	}
	tests := []struct {
		name        string
		waits       []wait
		wantBlocked int
		wantWaiters [3]int // heap entries per timeline afterwards
	}{
		{"local unpromised wait is held", []wait{{0, 5}}, 1, [3]int{1, 0, 0}},
		{"local promised wait goes through", []wait{{0, 1}}, 0, [3]int{}},
		{"shared wait goes through", []wait{{1, 5}}, 0, [3]int{}},
		{"exportable wait goes through", []wait{{2, 1 << 40}}, 0, [3]int{}},
		{"shared and local: held for the local one only", []wait{{1, 5}, {0, 7}}, 1, [3]int{1, 0, 0}},
		{"several shared waits", []wait{{1, 3}, {2, 9}, {1, 4}}, 0, [3]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Device{Log: slog.Default()}
			d.sched.max = 8
			tls := []*Timeline{d.NewTimeline(1, 1, nil), d.NewTimeline(2, 0, nil), d.NewTimeline(3, 0, nil)}
			tls[1].SetShared()
			tls[2].SetExportable()
			assert.False(t, tls[0].Shared())
			assert.True(t, tls[1].Shared())
			assert.True(t, tls[2].Shared())
			s := &Submission{Q: &Queue{}}
			for _, w := range tt.waits {
				s.Waits = append(s.Waits, Point{TL: tls[w.tl], Value: w.value})
			}
			d.sched.mu.Lock()
			require.NoError(t, d.sched.admit(d, s))
			d.sched.mu.Unlock()
			assert.Equal(t, tt.wantBlocked, s.blocked)
			assert.Equal(t, tt.wantBlocked == 0, len(d.sched.ready) == 1, "ready iff nothing blocks it")
			for i, tl := range tls {
				assert.Len(t, tl.waiters, tt.wantWaiters[i], "timeline %d", i)
			}
			held := d.Held()
			require.Len(t, held, 1)
			if tt.wantBlocked == 0 {
				assert.NotContains(t, held[0], "promised")
			}
		})
	}
}

// The order of signals still holds on a shared timeline: a later signal
// waits behind an earlier held signaller, and the bound on held submits
// does not count a submit held only by shared waits (it is not held).
func TestSharedTimelineSignalOrder(t *testing.T) {
	d := &Device{Log: slog.Default()}
	d.sched.max = 1
	local := d.NewTimeline(1, 0, nil)
	shared := d.NewTimeline(2, 0, nil)
	shared.SetShared()
	d.sched.mu.Lock()
	defer d.sched.mu.Unlock()
	first := &Submission{Q: &Queue{}, Waits: []Point{{TL: local, Value: 1}}, Signals: []Point{{TL: shared, Value: 1}}}
	require.NoError(t, d.sched.admit(d, first))
	assert.Equal(t, 1, first.blocked)
	second := &Submission{Q: &Queue{}, Waits: []Point{{TL: shared, Value: 1}}, Signals: []Point{{TL: shared, Value: 2}}}
	// Held behind first's signal of the same timeline, and the bound (1)
	// is reached.
	assert.ErrorIs(t, d.sched.admit(d, second), ErrBusy)
	third := &Submission{Q: &Queue{}, Waits: []Point{{TL: shared, Value: 1 << 20}}}
	require.NoError(t, d.sched.admit(d, third), "a submit with only shared waits is never held, so never refused")
	assert.Zero(t, third.blocked)
	assert.ErrorIs(t, d.sched.admit(d, &Submission{Q: &Queue{}, Signals: []Point{{TL: shared, Value: 1}}}), ErrInvalid,
		"signals must increase on shared timelines too")
}

package core

import (
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reference taken after the last one went (a sequence recording, an
// algorithm binding or a DLPack export racing the object's Close: they
// check Closed, then Acquire) must not run destroy a second time when it
// is dropped: that would free the buffer twice.
func TestObjectDestroyOnce(t *testing.T) {
	d := &Device{Log: slog.New(slog.DiscardHandler)}
	var o Object
	destroyed := 0
	require.NoError(t, o.Init(d, KindTensor, func() { destroyed++ }, nil))
	require.True(t, o.Close())
	require.Equal(t, 1, destroyed)
	o.Acquire() // lost the race with Close
	assert.True(t, o.Closed(), "the late holder sees the object closed")
	o.Release()
	assert.Equal(t, 1, destroyed, "destroy runs once")
	assert.Zero(t, d.Deferred())
}

// A timeline semaphore used by the batch of queue value v is idle only
// once the driver has retired that batch (a later batch completed, or the
// device was idled), while other objects are idle when v completes. The
// device-level reproduction is TestCloseHeldThenRelease in package vkflow.
func TestTimelineIdleRule(t *testing.T) {
	cases := []struct {
		name                       string
		kind                       Kind
		use, submitted, done, idle uint64
		want                       bool
	}{
		{"tensor at its completed value", KindTensor, 5, 5, 5, 0, true},
		{"tensor before its value", KindTensor, 5, 5, 4, 0, false},
		{"timeline at its completed value", KindTimeline, 5, 5, 5, 0, false},
		{"timeline after a later batch", KindTimeline, 5, 6, 6, 0, true},
		{"timeline with the later batch pending", KindTimeline, 5, 6, 6 - 1, 0, false},
		{"timeline after the device idled", KindTimeline, 5, 5, 5, 5, true},
		{"timeline idled before its use", KindTimeline, 5, 5, 5, 4, false},
		{"unused timeline", KindTimeline, 0, 5, 5, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &Device{Log: slog.New(slog.DiscardHandler)}
			q := &Queue{dev: d}
			d.queues = []*Queue{q}
			q.submitted.Store(c.submitted)
			q.completed.Store(c.done)
			q.idled.Store(c.idle)
			// Completed queries the driver only below the submitted value;
			// the cases that stay below it must not reach the driver.
			if c.done < c.submitted {
				d.closed.Store(true) // Completed then returns the cache
			}
			o := Object{dev: d, kind: c.kind, uses: make([]atomic.Uint64, 1)}
			o.MarkUse(0, c.use)
			assert.Equal(t, c.want, o.idle())
		})
	}
}

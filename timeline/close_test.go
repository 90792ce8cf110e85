package timeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/timeline"
)

// Closing a timeline while another goroutine waits on it does not destroy
// the semaphore under the wait (the layer reports a wait on a destroyed
// one): the wait ends, within a wait slice, with the failure of the value
// nobody can signal any more (ErrFailed, caused by ErrClosed), not by its
// context, and the semaphore goes after it.
func TestCloseDuringWait(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, tc := range []struct {
		name string
		wait func(context.Context, *timeline.Timeline) error
	}{
		{"Wait", func(ctx context.Context, tl *timeline.Timeline) error { return tl.Wait(ctx, 1) }},
		{"WaitAll", func(ctx context.Context, tl *timeline.Timeline) error {
			return timeline.WaitAll(ctx, timeline.Point{Timeline: tl, Value: 1})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := timeline.New(m, 0)
			require.NoError(t, err)
			done := make(chan error, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			go func() { done <- tc.wait(ctx, tl) }()
			time.Sleep(60 * time.Millisecond) // the wait is in its slices
			start := time.Now()
			require.NoError(t, tl.Close())
			err = <-done
			assert.ErrorIs(t, err, vkflow.ErrFailed)
			assert.ErrorIs(t, err, vkflow.ErrClosed)
			assert.Less(t, time.Since(start), 5*time.Second, "ended by the failure, not the context")
		})
	}
}

// Manager.Close while a goroutine waits on a timeline ends the wait with
// ErrClosed, and the semaphore is still destroyed before the device,
// whichever of the two finishes first.
func TestManagerCloseDuringWait(t *testing.T) {
	for i := 0; i < 5; i++ {
		m, _ := testutil.Manager(t)
		tl, err := timeline.New(m, 0)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- tl.Wait(context.Background(), 1) }()
		time.Sleep(20 * time.Millisecond)
		require.NoError(t, m.Close())
		assert.ErrorIs(t, <-done, vkflow.ErrClosed)
	}
}

// A submit that waits on a closed timeline and signals none is refused
// with ErrClosed, holding nothing (the scheduler's reference taking once
// indexed the empty signal list here).
func TestSubmitWaitOnClosedTimelineNoSignals(t *testing.T) {
	m, _ := testutil.Manager(t)
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, tl.Close())
	err = s.Submit(context.Background(), sequence.Wait(tl, 1)).Err()
	require.ErrorIs(t, err, vkflow.ErrClosed)
}

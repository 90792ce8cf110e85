package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// A Deadline behaves as context.WithTimeout's context: Err is nil before
// the deadline and DeadlineExceeded after it, Canceled after Stop; Done
// closes at the deadline or at Stop, also when asked for afterwards; a
// context derived from it ends with it.
func TestDeadline(t *testing.T) {
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	tests := []struct {
		name    string
		timeout time.Duration
		run     func(t *testing.T, c *core.Deadline)
	}{
		{"before the deadline", time.Hour, func(t *testing.T, c *core.Deadline) {
			dl, ok := c.Deadline()
			assert.True(t, ok)
			assert.WithinDuration(t, time.Now().Add(time.Hour), dl, time.Minute)
			assert.NoError(t, c.Err())
			assert.False(t, closed(c.Done()))
			assert.Nil(t, c.Value("key"))
		}},
		{"past the deadline, Done never asked for", 0, func(t *testing.T, c *core.Deadline) {
			assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
			assert.True(t, closed(c.Done()), "Done after Err reported the deadline")
		}},
		{"Done asked for, then the deadline passes", 20 * time.Millisecond, func(t *testing.T, c *core.Deadline) {
			done := c.Done()
			assert.False(t, closed(done))
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Done did not close at the deadline")
			}
			assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
		}},
		{"past the deadline, Err and Done agree", 20 * time.Millisecond, func(t *testing.T, c *core.Deadline) {
			done := c.Done()
			time.Sleep(30 * time.Millisecond)
			// Err closes Done itself when its timer has not fired yet.
			require.ErrorIs(t, c.Err(), context.DeadlineExceeded)
			assert.True(t, closed(done), "Err non-nil while Done is open")
		}},
		{"Stop before the deadline", time.Hour, func(t *testing.T, c *core.Deadline) {
			done := c.Done()
			c.Stop()
			assert.True(t, closed(done))
			assert.ErrorIs(t, c.Err(), context.Canceled)
			c.Stop() // idempotent
			assert.ErrorIs(t, c.Err(), context.Canceled)
		}},
		{"Stop without Done, then Done", time.Hour, func(t *testing.T, c *core.Deadline) {
			c.Stop()
			assert.True(t, closed(c.Done()))
			assert.ErrorIs(t, c.Err(), context.Canceled)
		}},
		{"a derived context ends with it", 20 * time.Millisecond, func(t *testing.T, c *core.Deadline) {
			child, cancel := context.WithCancel(c)
			defer cancel()
			select {
			case <-child.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the derived context did not end at the deadline")
			}
			assert.ErrorIs(t, child.Err(), context.DeadlineExceeded)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := core.NewDeadline(tc.timeout)
			defer c.Stop()
			tc.run(t, c)
		})
	}
}

// The point of a Deadline: a host wait bounded by one starts no timer
// (context.WithTimeout's timer woke a Go thread per read of a synchronous
// eager loop). Waiting for a tensor's pending work must use only Deadline
// and Err; a wait that selected on Done would start the timer and fail
// this test, whether the work completes in time or the deadline passes.
func TestDeadlineWaitStartsNoTimer(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithCloseTimeout(time.Second))
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer seq.Close()
	seq.Fill(x, float32(7))

	c := core.NewDeadline(time.Minute)
	require.NoError(t, seq.EvalAsync().Err())
	require.NoError(t, x.Wait(c), "a fill that completes")
	assert.False(t, c.TimerStarted())
	c.Stop()

	gate := blockQueue0(t, m)
	require.NoError(t, seq.EvalAsync().Err())
	c = core.NewDeadline(50 * time.Millisecond)
	defer c.Stop()
	start := time.Now()
	require.ErrorIs(t, x.Wait(c), context.DeadlineExceeded, "a fill behind a blocked queue")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.False(t, c.TimerStarted())

	require.NoError(t, gate.Signal(1))
	require.NoError(t, x.Wait(context.Background()))
	got, err := x.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{7, 7, 7, 7}, got)
	require.NoError(t, gate.Close())
}

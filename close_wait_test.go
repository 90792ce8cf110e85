package vkflow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/timeline"
)

// TestClosingEndsHeldWaitInGate: a call that waits inside the gate for a
// submit the scheduler holds back (a channel, not a sliced Vulkan wait:
// what ops.Stream's back-pressure waits for on a device with several
// physical queues) ends with ErrClosed when Close starts, if its context
// derives from Device.Closing; Close does not wait behind it for the
// wait's own deadline, since held submits are dropped only after the
// gate is drained. With context.Background as the parent, Close took
// 4.97 s of the 5 s deadline and the wait ended with DeadlineExceeded.
func TestClosingEndsHeldWaitInGate(t *testing.T) {
	const deadline = 5 * time.Second
	m, _ := testutil.Manager(t, vkflow.WithCloseTimeout(deadline))
	dev := m.Runtime()
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	p := seq.Submit(context.Background(), sequence.Wait(tl, 1)) // held: nobody promised 1
	require.NoError(t, p.Err())
	require.False(t, p.Done())

	waitErr := make(chan error, 1)
	inside := make(chan struct{})
	go func() {
		if err := dev.Enter(); err != nil {
			waitErr <- err
			return
		}
		defer dev.Exit()
		ctx, cancel := context.WithTimeout(dev.Closing(), deadline)
		defer cancel()
		close(inside)
		err := p.Wait(ctx)
		if cause := context.Cause(ctx); err != nil && errors.Is(cause, vkflow.ErrClosed) {
			err = cause
		}
		waitErr <- err
	}()
	<-inside
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	err = m.Close()
	took := time.Since(start)
	t.Logf("Close took %v", took.Round(time.Millisecond))
	assert.Error(t, err, "the held submit is reported")
	assert.Less(t, took, deadline/2, "Close waited behind a wait in the gate")
	assert.ErrorIs(t, <-waitErr, vkflow.ErrClosed)
}

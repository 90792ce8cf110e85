package opcore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// TestStreamBackPressureClose: a stream call blocked in its back-pressure
// wait (its ring is full and the GPU queue is stuck behind a wait on a
// timeline that only "another process" signals) does not hold Close: the
// call ends with ErrClosed as soon as Close starts, and Close goes on to
// wait for the GPU, which it finishes once the timeline is signalled.
func TestStreamBackPressureClose(t *testing.T) {
	const timeout = 10 * time.Second
	m, _ := testutil.Manager(t, vkflow.WithCloseTimeout(timeout))
	s, err := ops.NewStream(m, ops.WithMaxInFlight(1))
	require.NoError(t, err)
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)

	// Waits on a shared timeline go to the driver unheld: the queue stops
	// there until the host signals it.
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	tl.State().SetShared()
	gate, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, gate.Submit(context.Background(), sequence.Wait(tl, 1)).Err())

	_, err = s.Call("add", []*tensor.Tensor{x, x}, []*tensor.Tensor{x}, ops.Attrs{})
	require.NoError(t, err)
	callErr := make(chan error, 1)
	go func() { // the ring is full: waits for the first call
		_, err := s.Call("add", []*tensor.Tensor{x, x}, []*tensor.Tensor{x}, ops.Attrs{})
		callErr <- err
	}()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-callErr:
		t.Fatalf("the second call did not wait for the stuck first one: %v", err)
	default:
	}

	dev := m.Runtime()
	start := time.Now()
	closeErr := make(chan error, 1)
	go func() { closeErr <- m.Close() }()
	select {
	case err := <-callErr:
		t.Logf("the blocked call returned %v after Close started", time.Since(start).Round(time.Millisecond))
		assert.True(t, errors.Is(err, vkflow.ErrClosed), "%v", err)
	case <-time.After(2 * time.Second):
		t.Errorf("the call in back-pressure still waits %v after Close started", time.Since(start).Round(time.Millisecond))
	}
	// "Another process" signals the timeline; the GPU finishes, so does
	// Close.
	const release = time.Second
	time.Sleep(release - time.Since(start))
	require.NoError(t, dev.VK.SignalSemaphore(tl.Semaphore(), 1))
	select {
	case err := <-closeErr:
		took := time.Since(start)
		t.Logf("Close returned %v after it started (the GPU was released at %v)", took.Round(time.Millisecond), release)
		assert.NoError(t, err)
		assert.Less(t, took, release+2*time.Second)
	case <-time.After(2 * timeout):
		t.Fatal("Close never returned")
	}
	select {
	case err := <-callErr:
		t.Fatalf("late call result: %v", err)
	default:
	}
}

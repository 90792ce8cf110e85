package core

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/vk"
)

// Close's drain waits for calls inside the gate, and no call gets in once
// closed is set, nested ones included.
func TestGateDrain(t *testing.T) {
	d := &Device{Log: slog.Default()}
	require.NoError(t, d.Enter())
	d.closed.Store(true)
	drained := make(chan struct{})
	go func() {
		d.drain()
		close(drained)
	}()
	assert.ErrorIs(t, d.Enter(), ErrClosed, "a nested Enter after Close started")
	assert.False(t, d.enter())
	select {
	case <-drained:
		t.Fatal("drain returned while a call was inside")
	case <-time.After(20 * time.Millisecond):
	}
	d.Exit()
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("drain did not return after the last Exit")
	}
	assert.ErrorIs(t, d.Enter(), ErrClosed)
}

// Device loss is sticky for Enter, names the first lost call, and leaves
// closing (enter) possible.
func TestGateLost(t *testing.T) {
	d := &Device{Log: slog.New(slog.DiscardHandler)}
	require.NoError(t, d.Enter())
	d.Exit()
	other := &vk.Error{Call: "vkAllocateMemory", Result: vk.ErrorOutOfDeviceMemory}
	assert.Same(t, error(other), d.check(other))
	require.NoError(t, d.Enter(), "only device loss is sticky")
	d.Exit()
	lost := &vk.Error{Call: "vkQueueSubmit", Result: vk.ErrorDeviceLost}
	d.check(lost)
	d.check(&vk.Error{Call: "vkWaitSemaphores", Result: vk.ErrorDeviceLost})
	err := d.Enter()
	require.ErrorIs(t, err, ErrDeviceLost)
	var ve *vk.Error
	require.True(t, errors.As(err, &ve))
	assert.Equal(t, "vkQueueSubmit", ve.Call, "the first loss is reported")
	assert.True(t, d.enter(), "objects can still be closed")
	d.Exit()
	assert.Zero(t, d.inflight.Load())
}

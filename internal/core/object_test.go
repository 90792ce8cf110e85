package core

import (
	"log/slog"
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

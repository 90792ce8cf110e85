package dlpack

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// lockedBuffer is a log sink safe for the export's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A consumer that never reaches its released point does not leave a
// goroutine waiting forever: Close waits for it within its timeout, then
// gives up, logs it, and leaks the memory (the device stays pinned) rather
// than freeing memory the consumer's GPU work may still use. The wait ends
// before Close destroys the timeline it waits on.
func TestReleasedPointNeverReached(t *testing.T) {
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))
	m, _ := testutil.Manager(t, vkflow.WithCloseTimeout(200*time.Millisecond), vkflow.WithLogger(log))
	ten, err := tensor.New(m, tensor.Float32, []int{64}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	mt, err := Export(ctx, ten, Options{})
	require.NoError(t, err)
	require.NoError(t, ten.Close())
	mt.SetReleased(tl.Semaphore(), 3)
	mt.Delete()

	start := time.Now()
	require.NoError(t, m.Close(), "a consumer's missing signal is the consumer's fault, logged, not Close's error")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, logs.String(), "released point was not reached", "the wait ended by the time Close returned")
	assert.Contains(t, logs.String(), "Close gave up")
}

package interop_test

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
)

// stressImports is the number of imports TestConcurrentImports makes:
// VKFLOW_INTEROP_STRESS, else 8,000 (under a second with -race on lavapipe,
// where 10 to 22 of them failed before imports got an open file description
// of their own); make soak runs 200,000.
func stressImports(t *testing.T) int {
	if v := os.Getenv("VKFLOW_INTEROP_STRESS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "VKFLOW_INTEROP_STRESS")
		return n
	}
	return 8000
}

// Many goroutines import fds of one allocation at once, into two
// Managers: every import succeeds and sees the exporter's bytes. The fds
// Export returns share one open file description (they are dups), so a
// driver that reads the fd through its file offset (lavapipe reads its
// memfd's header so) must not see another import move it.
func TestConcurrentImports(t *testing.T) {
	a, b := pair(t)
	const G = 16
	total := stressImports(t)
	x, err := tensor.New(a, tensor.Uint32, []int{256}, tensor.Exportable())
	require.NoError(t, err)
	want := make([]uint32, 256)
	for i := range want {
		want[i] = uint32(i*2654435761) ^ 0x5a5a5a5a
	}
	require.NoError(t, tensor.Write(x, want))
	baseFDs := openFDs(t)

	var next, failed atomic.Int64
	var firstErr sync.Once
	start := time.Now()
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := []*vkflow.Manager{a, b}[g%2]
			for next.Add(1) <= int64(total) {
				h, err := interop.Export(x)
				if !assert.NoError(t, err) {
					return
				}
				y, err := interop.Import(owner, h, tensor.Uint32, []int{256})
				if err != nil {
					failed.Add(1)
					firstErr.Do(func() { t.Errorf("import: %v", err) })
					continue
				}
				got, err := y.Uint32s()
				assert.NoError(t, err)
				if !assert.Equal(t, want[:4], got[:4]) {
					failed.Add(1)
				}
				assert.NoError(t, y.Close())
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	t.Logf("%d imports on %d goroutines in %v (%.0f/s): %d failed", total, G, el, float64(total)/el.Seconds(), failed.Load())
	assert.Zero(t, failed.Load(), "imports failed")
	assert.Equal(t, baseFDs, openFDs(t), "every fd was consumed and every import freed")
	assert.Zero(t, b.MemStats().Allocations)
}

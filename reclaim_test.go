package vkflow_test

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// busy submits work that is still running for a while after submission
// on lavapipe (40 dispatches over 4M floats), writing out, and returns what
// it created besides out.
func busy(t *testing.T, m *vkflow.Manager, out *tensor.Tensor) (sequence.Pending, []interface{ Close() error }) {
	t.Helper()
	n := out.Len()
	a, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	mul, err := kernels.MultiplyScalar(m, a, a, out)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	for i := 0; i < 40; i++ {
		seq.Dispatch(mul)
	}
	p := seq.EvalAsync()
	require.NoError(t, p.Err())
	return p, []interface{ Close() error }{seq, mul, a}
}

// eventually polls cond without making any vkflow call that could collect
// deferred objects (MemStats and Deferred only read counters).
func eventually(t *testing.T, within time.Duration, cond func() bool) bool {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestReclaimWithoutHostCall: tensors closed while the GPU still uses them
// are freed once it is done, with no later vkflow call: the completion
// watcher notices. Before it, an idle Manager held the memory until some
// later submit or wait ran a collection.
func TestReclaimWithoutHostCall(t *testing.T) {
	m, _ := testutil.Manager(t)
	out, err := tensor.New(m, tensor.Float32, []int{1 << 22})
	require.NoError(t, err)
	p, objs := busy(t, m, out)
	before := m.MemStats().Allocations
	rounds := m.Runtime().WatcherRounds()
	start := time.Now()
	for _, o := range append(objs, out) {
		require.NoError(t, o.Close())
	}
	require.False(t, p.Done(), "the work must still run when everything is closed")
	require.Positive(t, m.Runtime().Deferred(), "closed while in use: deferred")
	var gpuDone time.Duration
	ok := eventually(t, 20*time.Second, func() bool {
		if gpuDone == 0 && p.Done() { // reads the queue's value; collects nothing
			gpuDone = time.Since(start)
		}
		return m.Runtime().Deferred() == 0 && m.MemStats().Allocations == before-2
	})
	require.True(t, ok, "deferred objects never freed without a host call: %d left, %d of %d allocations",
		m.Runtime().Deferred(), m.MemStats().Allocations, before)
	t.Logf("freed %v after the close, with no vkflow call; the GPU work was seen done at %v",
		time.Since(start).Round(time.Millisecond), gpuDone.Round(time.Millisecond))
	// It waited rather than polled: a few rounds (one per kick and per
	// value reached), and none while idle.
	busyRounds := m.Runtime().WatcherRounds() - rounds
	t.Logf("watcher rounds: %d while the GPU ran", busyRounds)
	assert.LessOrEqual(t, busyRounds, uint64(10), "the watcher polled")
	idle := m.Runtime().WatcherRounds()
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, idle, m.Runtime().WatcherRounds(), "the watcher woke while idle")
}

func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(es)
}

// TestReclaimExportedMemFD: an exportable tensor's memory (a memfd on
// lavapipe) closed while the GPU writes it is freed, and its fd closed,
// once the GPU is done, with no later vkflow call.
func TestReclaimExportedMemFD(t *testing.T) {
	m, _ := testutil.Manager(t)
	if err := interop.Supported(m); err != nil {
		t.Skipf("no memory sharing: %v", err)
	}
	base := openFDs(t)
	out, err := tensor.New(m, tensor.Float32, []int{1 << 22}, tensor.Exportable())
	require.NoError(t, err)
	withMem := openFDs(t)
	t.Logf("fds: %d before the exportable tensor, %d with it", base, withMem)
	p, objs := busy(t, m, out)
	for _, o := range append(objs, out) {
		require.NoError(t, o.Close())
	}
	require.False(t, p.Done(), "the work must still run when everything is closed")
	allocs := m.MemStats().Allocations
	ok := eventually(t, 20*time.Second, func() bool { return m.Runtime().Deferred() == 0 && m.MemStats().Allocations == allocs-2 })
	require.True(t, ok, "the exportable tensor was never freed without a host call")
	if withMem > base {
		assert.True(t, eventually(t, time.Second, func() bool { return openFDs(t) <= base }),
			"the memory's fd is still open: %d fds, %d before", openFDs(t), base)
	}
}

// watchers counts the goroutines of devices' completion watchers.
func watchers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "core.(*queueWatch).run")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestWatcherStopsWithManager: each Manager runs one watcher goroutine
// per physical queue, which Close stops and joins; Close with the watcher parked (on nothing,
// or on a queue value of work that completes meanwhile) is fast.
func TestWatcherStopsWithManager(t *testing.T) {
	before := watchers()
	for _, pending := range []bool{false, true} {
		m, _ := testutil.Manager(t)
		n := m.Runtime().PhysicalQueues()
		require.True(t, eventually(t, time.Second, func() bool { return watchers() == before+n }),
			"%d watcher goroutines, want one per physical queue (%d)", watchers()-before, n)
		a, err := tensor.FromSlice(m, []float32{1, 2, 3})
		require.NoError(t, err)
		require.NoError(t, a.Close())
		if pending {
			out, err := tensor.New(m, tensor.Float32, []int{1 << 20})
			require.NoError(t, err)
			p, objs := busy(t, m, out)
			for _, o := range append(objs, out) {
				require.NoError(t, o.Close())
			}
			require.NoError(t, p.Wait(context.Background()))
		}
		time.Sleep(20 * time.Millisecond) // let it park
		start := time.Now()
		require.NoError(t, m.Close())
		took := time.Since(start)
		t.Logf("pending=%v: Close took %v", pending, took)
		assert.Less(t, took, time.Second, "Close waits for the parked watcher")
		// Close joined them; the exiting goroutines may show a moment longer.
		assert.True(t, eventually(t, time.Second, func() bool { return watchers() == before }),
			"%d watcher goroutines outlived Close", watchers()-before)
	}
}

package opcore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

func filled(t *testing.T, m tensor.Owner, n int, v float32) *tensor.Tensor {
	t.Helper()
	data := make([]float32, n)
	for i := range data {
		data[i] = v
	}
	x, err := tensor.FromSlice(m, data)
	require.NoError(t, err)
	return x
}

// poolSettled waits until the stream's idle timer has reclaimed every call
// (their outputs then are destroyed and given to the pool) and returns the
// pool's counters.
func poolSettled(t *testing.T, s *ops.Stream, given uint64) ops.PoolStats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.PoolStats()
		if uint64(st.Buffers)+st.Freed >= given || time.Now().After(deadline) {
			return st
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// TestStreamPoolReuses: a synchronous loop (call, read, close) allocates
// its output buffer once and reuses it from then on; every result is
// right, and Synchronize gives the memory back.
func TestStreamPoolReuses(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	const n, iters = 1000, 40
	a, b := filled(t, m, n, 1), filled(t, m, n, 2)
	call1(t, s, "add", a, b).Close() // the prepared op (a cache miss allocates outside the pool)
	require.NoError(t, s.Synchronize(ctxT(t)))
	base := m.MemStats().Allocations
	for i := 0; i < iters; i++ {
		c := call1(t, s, "add", a, b)
		got := readF32(t, c)
		require.Equal(t, float32(3), got[0], "iteration %d", i)
		require.Equal(t, float32(3), got[n-1], "iteration %d", i)
		require.NoError(t, c.Close())
	}
	st := s.PoolStats()
	assert.LessOrEqual(t, st.Allocated, uint64(2), "new buffers")
	assert.GreaterOrEqual(t, st.Reused, uint64(iters-2), "reused buffers")
	assert.LessOrEqual(t, m.MemStats().Allocations, base+2)
	require.NoError(t, s.Synchronize(ctxT(t)))
	assert.Zero(t, s.PoolStats().Buffers, "Synchronize empties the pool")
	assert.Equal(t, base, m.MemStats().Allocations)
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
}

// TestStreamPoolPendingRead: an output closed while a submit that reads it
// is still pending (held back on a timeline) is not reused by later calls
// until that read has run: the read sees the old values, not those of the
// later calls.
func TestStreamPoolPendingRead(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	const n = 256
	a, b := filled(t, m, n, 1), filled(t, m, n, 2)
	seven := filled(t, m, n, 5)
	call1(t, s, "add", a, b).Close()
	call1(t, s, "add", a, seven).Close()
	require.NoError(t, s.Synchronize(ctxT(t)))

	x := call1(t, s, "add", a, b) // 3
	require.NoError(t, x.Wait(ctxT(t)))
	y, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	pend := seq.Copy(x, y).Submit(ctxT(t), sequence.Wait(tl, 1)) // held until tl reaches 1
	require.NoError(t, pend.Err())
	require.NoError(t, x.Close())
	require.NoError(t, seq.Close())

	before := s.PoolStats().Reused
	var later []*tensor.Tensor
	for i := 0; i < 8; i++ { // outputs of x's size, written with 6
		c := call1(t, s, "add", a, seven)
		require.NoError(t, c.Wait(ctxT(t)))
		later = append(later, c)
	}
	assert.Equal(t, before, s.PoolStats().Reused, "x's buffer was reused while a read of it was pending")
	require.NoError(t, tl.Signal(1))
	require.NoError(t, pend.Wait(ctxT(t)))
	got := readF32(t, y)
	for i, v := range got {
		require.Equal(t, float32(3), v, "element %d: the pending copy read a later call's output", i)
	}
	for _, c := range later {
		require.Equal(t, float32(6), readF32(t, c)[0])
		require.NoError(t, c.Close())
	}
	for _, z := range []*tensor.Tensor{a, b, seven, y} {
		require.NoError(t, z.Close())
	}
	require.NoError(t, tl.Close())
}

// TestStreamPoolBound: the pool keeps at most WithPoolSize bytes; what it
// cannot keep is freed, and WithPoolSize(0) keeps nothing.
func TestStreamPoolBound(t *testing.T) {
	m, _ := testutil.Manager(t)
	const n, live = 1024, 10 // 4 KiB outputs
	for _, tc := range []struct {
		name  string
		size  int64
		most  int
		stats bool
	}{
		{"three buffers", 3 * 4096, 3, true},
		{"disabled", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ops.NewStream(m, ops.WithPoolSize(tc.size))
			require.NoError(t, err)
			defer s.Close()
			a := filled(t, m, n, 1)
			defer a.Close()
			call1(t, s, "neg", a).Close()
			require.NoError(t, s.Synchronize(ctxT(t)))
			var outs []*tensor.Tensor
			for i := 0; i < live; i++ {
				outs = append(outs, call1(t, s, "neg", a))
			}
			for _, o := range outs {
				require.Equal(t, float32(-1), readF32(t, o)[0])
				require.NoError(t, o.Close())
			}
			if !tc.stats {
				assert.Equal(t, ops.PoolStats{}, s.PoolStats())
				return
			}
			st := poolSettled(t, s, live)
			assert.LessOrEqual(t, st.Buffers, tc.most)
			assert.LessOrEqual(t, st.Bytes, uint64(tc.size))
			assert.Equal(t, uint64(live), uint64(st.Buffers)+st.Freed, "every buffer kept or freed")
		})
	}
	_, err := ops.NewStream(m, ops.WithPoolSize(-1))
	require.Error(t, err)
}

// TestStreamPoolIdleTrim: an idle stream's pool gives its buffers back by
// itself, with no call, Synchronize or Close.
func TestStreamPoolIdleTrim(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	a := filled(t, m, 64, 1)
	defer a.Close()
	call1(t, s, "neg", a).Close()
	require.NoError(t, s.Synchronize(ctxT(t)))
	base := m.MemStats().Allocations
	for i := 0; i < 5; i++ {
		o := call1(t, s, "neg", a)
		require.NoError(t, o.Wait(ctxT(t)))
		require.NoError(t, o.Close())
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && m.MemStats().Allocations != base {
		time.Sleep(5 * time.Millisecond)
	}
	assert.Equal(t, base, m.MemStats().Allocations, "the idle stream's pool still holds buffers")
	assert.Zero(t, s.PoolStats().Buffers)
}

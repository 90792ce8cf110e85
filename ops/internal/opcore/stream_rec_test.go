package opcore_test

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// setF32 writes v into x once the GPU is done with it.
func setF32(t *testing.T, x *tensor.Tensor, v ...float32) {
	t.Helper()
	require.NoError(t, x.Wait(ctxT(t)))
	require.NoError(t, x.WriteBytes(f32le(v...)))
}

func f32le(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// TestStreamRecordings: a cached op's calls submit kept recordings as
// recorded when the pool hands back the buffers a recording names, and
// record again when it does not; either way every call writes its own
// output, from its own inputs, and the cache counts the hits.
func TestStreamRecordings(t *testing.T) {
	type step struct {
		op   string // add or mul
		pair int    // which inputs
		keep bool   // keep the output alive (the pool hands back another buffer)
	}
	var sync, kept, pairs, mixed []step
	for i := 0; i < 40; i++ {
		sync = append(sync, step{op: "add"})
		kept = append(kept, step{op: "add", keep: i < 20})
		pairs = append(pairs, step{op: "add", pair: i % 2})
		mixed = append(mixed, step{op: []string{"add", "mul"}[i%2], pair: i % 3 % 2, keep: i%5 == 0})
	}
	for _, tc := range []struct {
		name       string
		steps      []step
		minReplays uint64
		misses     uint64
	}{
		{"sync loop", sync, 10, 1},
		{"outputs kept, then closed", kept, 5, 1},
		{"two input pairs", pairs, 10, 1},
		{"add and mul interleaved, outputs kept now and then", mixed, 5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := testutil.Manager(t)
			s, err := ops.NewStream(m)
			require.NoError(t, err)
			defer s.Close()
			in := make([][2]*tensor.Tensor, 2)
			for p := range in {
				for k := range in[p] {
					in[p][k], err = tensor.New(m, tensor.Float32, []int{1000})
					require.NoError(t, err)
				}
			}
			before := m.OpCacheStats()
			var live []*tensor.Tensor
			var prev *tensor.Tensor
			for i, st := range tc.steps {
				a, b := in[st.pair][0], in[st.pair][1]
				// New input values at every call.
				x, y := float32(i+1), float32(10*(st.pair+1))
				av, bv := make([]float32, 1000), make([]float32, 1000)
				for j := range av {
					av[j], bv[j] = x, y+float32(j%7)
				}
				setF32(t, a, av...)
				setF32(t, b, bv...)
				c := call1(t, s, st.op, a, b)
				got := readF32(t, c)
				for _, j := range []int{0, 1, 6, 999} {
					want := x + y + float32(j%7)
					if st.op == "mul" {
						want = x * (y + float32(j%7))
					}
					require.Equal(t, want, got[j], "call %d (%s), element %d", i, st.op, j)
				}
				if st.keep {
					live = append(live, c)
					continue
				}
				if prev != nil {
					require.NoError(t, prev.Close()) // as Python drops the last result
				}
				prev = c
			}
			for _, c := range append(live, prev) {
				require.NoError(t, c.Close())
			}
			replays, records := opcore.RecordingStats(s)
			assert.GreaterOrEqual(t, replays, tc.minReplays, "recordings submitted as recorded (records: %d)", records)
			t.Logf("replays %d, records %d", replays, records)
			after := m.OpCacheStats()
			assert.Equal(t, uint64(len(tc.steps))-tc.misses, after.Hits-before.Hits, "cache hits")
			assert.Equal(t, tc.misses, after.Misses-before.Misses, "cache misses")
		})
	}
}

// TestStreamRecordingQueues: a stream on queue 1 reads what the default
// stream on queue 0 writes in place, call after call, through recordings
// submitted as recorded on both queues, with outputs closed and their
// buffers reused.
func TestStreamRecordingQueues(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	s0, err := ops.DefaultStream(m)
	require.NoError(t, err)
	s1, err := ops.NewStream(m, ops.OnQueue(1))
	require.NoError(t, err)
	defer s1.Close()
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	one, err := tensor.FromSlice(m, []float32{1, 1, 1, 1})
	require.NoError(t, err)
	var prev *tensor.Tensor
	for i := 0; i < 40; i++ {
		_, err := s0.Call("add", []*tensor.Tensor{x, one}, []*tensor.Tensor{x}, ops.Attrs{}) // x += 1 on queue 0
		require.NoError(t, err)
		y := call1(t, s1, "neg", x) // reads x on queue 1
		k := float32(i + 1)
		require.Equal(t, []float32{-1 - k, -2 - k, -3 - k, -4 - k}, readF32(t, y), "call %d", i)
		if prev != nil {
			require.NoError(t, prev.Close())
		}
		prev = y
	}
	require.NoError(t, prev.Close())
	r0, _ := opcore.RecordingStats(s0)
	r1, _ := opcore.RecordingStats(s1)
	assert.Greater(t, r0, uint64(10), "queue 0 resubmits its recording")
	assert.Greater(t, r1, uint64(10), "queue 1 resubmits its recordings")
}

// TestStreamRecordingsFreeMemory: a closed input whose buffer an idle
// recording names is freed once the stream goes idle, without a host call,
// and at Synchronize.
func TestStreamRecordingsFreeMemory(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(map[bool]string{false: "idle", true: "Synchronize"}[sync], func(t *testing.T) {
			m, _ := testutil.Manager(t)
			s, err := ops.NewStream(m)
			require.NoError(t, err)
			defer s.Close()
			one, err := tensor.FromSlice(m, []float32{1, 1, 1, 1})
			require.NoError(t, err)
			defer one.Close()
			require.NoError(t, s.Synchronize(ctxT(t)))
			base := m.MemStats().Allocations
			x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
			require.NoError(t, err)
			var c *tensor.Tensor
			for i := 0; i < 5; i++ {
				c = call1(t, s, "add", x, one)
				require.Equal(t, float32(2), readF32(t, c)[0])
				require.NoError(t, c.Close())
			}
			replays, _ := opcore.RecordingStats(s)
			require.Positive(t, replays)
			require.NoError(t, x.Close())
			if sync {
				require.NoError(t, s.Synchronize(context.Background()))
				require.Equal(t, base, m.MemStats().Allocations, "Synchronize left a closed input's buffer pinned")
				return
			}
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) && m.MemStats().Allocations != base {
				time.Sleep(5 * time.Millisecond)
			}
			require.Equal(t, base, m.MemStats().Allocations, "a closed input's buffer is still pinned")
		})
	}
}

// TestStreamReclaimsAtEachCall: a busy stream takes back its completed
// calls at each call (right after the call's submit), not only when its
// idle timer fires: in a synchronous loop (call, read, close) the ring
// holds the call just made and at most the one before it, and the output
// pool hands back the closed outputs' buffers, so most calls submit a
// kept recording. A stream that took nothing back at its calls
// would hold every call since the last idle period.
func TestStreamReclaimsAtEachCall(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	a, err := tensor.New(m, tensor.Float32, []int{1000})
	require.NoError(t, err)
	const calls = 60
	most := 0
	for i := 0; i < calls; i++ {
		c := call1(t, s, "add", a, a)
		most = max(most, opcore.InFlight(s))
		_ = readF32(t, c)
		require.NoError(t, c.Close())
	}
	assert.LessOrEqual(t, most, 2, "calls in the ring right after a call")
	replays, records := opcore.RecordingStats(s)
	// Loose: a stall of the machine past the idle period (10 ms) drops the
	// recordings, and the next call records again.
	assert.GreaterOrEqual(t, replays, uint64(calls/2), "recordings submitted as recorded (records: %d)", records)
}

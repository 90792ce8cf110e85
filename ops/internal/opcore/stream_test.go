package opcore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func call1(t *testing.T, s *ops.Stream, name string, in ...*tensor.Tensor) *tensor.Tensor {
	t.Helper()
	outs, err := s.Call(name, in, nil, ops.Attrs{})
	require.NoError(t, err)
	require.Len(t, outs, 1)
	return outs[0]
}

func readF32(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	require.NoError(t, x.Wait(ctxT(t)))
	v, err := x.Float32s()
	require.NoError(t, err)
	return append([]float32(nil), v...)
}

// TestStreamCall: an eager call returns its output, the cache is hit from
// the second call on, and no call waits on the host.
func TestStreamCall(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	s2, err := ops.DefaultStream(m)
	require.NoError(t, err)
	require.Same(t, s, s2, "one default stream per Manager")
	a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	b, err := tensor.FromSlice(m, []float32{10, 20, 30, 40})
	require.NoError(t, err)
	before := m.OpCacheStats()
	const n = 50
	var c *tensor.Tensor
	for i := 0; i < n; i++ {
		if c != nil {
			require.NoError(t, c.Close())
		}
		c = call1(t, s, "add", a, b)
	}
	assert.Equal(t, []float32{11, 22, 33, 44}, readF32(t, c))
	st := m.OpCacheStats()
	assert.Equal(t, uint64(1), st.Misses-before.Misses)
	assert.Equal(t, uint64(n-1), st.Hits-before.Hits, "a steady loop hits the cache every time after the first")
	assert.Equal(t, uint64(n), st.Submits-before.Submits)
	assert.Zero(t, st.HostWaits-before.HostWaits, "no host wait inside eager calls")
	assert.Equal(t, int64(1), st.Entries)

	// Reductions (scratch tensors, several dispatches) and matmul reuse
	// their prepared op too, with results that follow the new inputs.
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		require.NoError(t, tensor.Write(x, []float32{1, 2, 3, 4, 5, float32(6 + i)}))
		outs, err := s.Call("sum", []*tensor.Tensor{x}, nil, ops.Attrs{Axes: []int{1}})
		require.NoError(t, err)
		assert.Equal(t, []float32{6, float32(15 + i)}, readF32(t, outs[0]))
		require.NoError(t, x.Wait(ctxT(t)))
	}
}

// TestStreamOrdering queues thousands of dependent eager ops from several
// goroutines: chains of x = x + 1 with new outputs, in-place updates of a
// tensor other calls still read, and inputs closed while calls that read
// them are queued. The host reads once per chain at the end. Without the
// barriers the queue infers between submits the validation layer reports
// hazards (tools/test-oracle.sh runs this test with vkflow_nobarriers and
// requires that).
func TestStreamOrdering(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	const workers, steps = 4, 300
	one, err := tensor.FromSlice(m, []float32{1, 1, 1, 1, 1, 1, 1, 1})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	results := make([]*tensor.Tensor, workers)
	acc := make([]*tensor.Tensor, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			x, err := tensor.New(m, tensor.Float32, []int{8})
			if err != nil {
				errs <- err
				return
			}
			in, err := tensor.New(m, tensor.Float32, []int{8})
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < steps; i++ {
				// New output: the input is closed at once, with the call
				// that reads it still queued.
				outs, err := s.Call("add", []*tensor.Tensor{x, one}, nil, ops.Attrs{})
				if err != nil {
					errs <- err
					return
				}
				_ = x.Close()
				x = outs[0]
				// In place: acc = acc + x overwrites acc, which the
				// previous call read and wrote.
				if _, err := s.Call("add", []*tensor.Tensor{in, x}, []*tensor.Tensor{in}, ops.Attrs{}); err != nil {
					errs <- err
					return
				}
			}
			results[w], acc[w] = x, in
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for w := 0; w < workers; w++ {
		got := readF32(t, results[w])
		sum := readF32(t, acc[w])
		for i := range got {
			require.Equal(t, float32(steps), got[i], "worker %d element %d", w, i)
			require.Equal(t, float32(steps*(steps+1)/2), sum[i], "worker %d element %d", w, i)
		}
	}
	require.NoError(t, s.Synchronize(ctxT(t)))
	assert.Zero(t, m.OpCacheStats().HostWaits)
}

// TestStreamInputsOverwritten: a later call overwrites an input of an
// earlier call that is still queued; the earlier call must see the old
// values (write after read is ordered).
func TestStreamInputsOverwritten(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	const n = 1 << 16
	a, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	require.NoError(t, tensor.Write(a, ones))
	var outs []*tensor.Tensor
	for i := 0; i < 20; i++ {
		outs = append(outs, call1(t, s, "mul", a, a)) // reads a
		// a = a + a: overwrites what the call above reads.
		_, err := s.Call("add", []*tensor.Tensor{a, a}, []*tensor.Tensor{a}, ops.Attrs{})
		require.NoError(t, err)
	}
	for i, o := range outs {
		v := float32(int(1) << i)
		got := readF32(t, o)
		require.Equal(t, v*v, got[0], "call %d", i)
		require.Equal(t, v*v, got[n-1], "call %d", i)
	}
}

// TestStreamErrors: bad calls fail at once, named after the op, and leave
// no allocation behind.
func TestStreamErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m, ops.WithCacheSize(4))
	require.NoError(t, err)
	f, err := tensor.FromSlice(m, []float32{1, 2, 3})
	require.NoError(t, err)
	i32, err := tensor.FromSlice(m, []int32{1, 2, 3})
	require.NoError(t, err)
	f4, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	closed, err := tensor.FromSlice(m, []float32{1, 2, 3})
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	live := m.MemStats().Allocations
	for _, tc := range []struct {
		name string
		op   string
		in   []*tensor.Tensor
		out  []*tensor.Tensor
		want error
		msg  string
	}{
		{"dtypes", "add", []*tensor.Tensor{f, i32}, nil, vkflow.ErrInvalid, "ops.add"},
		{"shapes", "add", []*tensor.Tensor{f, f4}, nil, vkflow.ErrInvalid, "ops.add"},
		{"no such op", "nope", []*tensor.Tensor{f}, nil, vkflow.ErrInvalid, "nope"},
		{"closed input", "add", []*tensor.Tensor{f, closed}, nil, vkflow.ErrClosed, "ops.add: input 1"},
		{"nil input", "neg", []*tensor.Tensor{nil}, nil, vkflow.ErrInvalid, "ops.neg: input 0 is nil"},
		{"closed output", "neg", []*tensor.Tensor{f}, []*tensor.Tensor{closed}, vkflow.ErrClosed, "ops.neg: output 0"},
		{"output shape", "neg", []*tensor.Tensor{f}, []*tensor.Tensor{f4}, vkflow.ErrInvalid, "ops.neg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Call(tc.op, tc.in, tc.out, ops.Attrs{})
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	// The same bad call again, now that a good one with f is cached.
	call1(t, s, "add", f, f).Close()
	_, err = s.Call("add", []*tensor.Tensor{f, closed}, nil, ops.Attrs{})
	require.ErrorIs(t, err, vkflow.ErrClosed)
	require.NoError(t, s.Synchronize(ctxT(t)))
	assert.Equal(t, live, m.MemStats().Allocations, "failed calls leave no allocation")

	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
	_, err = s.Call("add", []*tensor.Tensor{f, f}, nil, ops.Attrs{})
	require.ErrorIs(t, err, vkflow.ErrClosed)
	require.ErrorIs(t, s.Synchronize(ctxT(t)), vkflow.ErrClosed)

	d, err := ops.DefaultStream(m)
	require.NoError(t, err)
	require.ErrorIs(t, d.Close(), vkflow.ErrInvalid, "the default stream goes with the Manager")
	_, err = ops.NewStream(m, ops.OnQueue(5))
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	_, err = ops.NewStream(m, ops.WithCacheSize(0))
	require.ErrorIs(t, err, vkflow.ErrInvalid)
}

// TestStreamSynchronizeTimeout: a context that ends before the queued work
// does is Synchronize's error; the work completes all the same.
func TestStreamSynchronizeTimeout(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	x, err := tensor.New(m, tensor.Float32, []int{1 << 20})
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		_, err := s.Call("add", []*tensor.Tensor{x, x}, []*tensor.Tensor{x}, ops.Attrs{})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	require.ErrorIs(t, s.Synchronize(ctx), context.DeadlineExceeded)
	require.NoError(t, s.Synchronize(ctxT(t)))
}

// TestStreamCacheBound: the LRU keeps at most its bound, evicts the least
// recently used op, and a re-registered kernel is never served from the
// cache.
func TestStreamCacheBound(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m, ops.WithCacheSize(2))
	require.NoError(t, err)
	defer s.Close()
	xs := make([]*tensor.Tensor, 3)
	for i := range xs {
		xs[i], err = tensor.New(m, tensor.Float32, []int{i + 1})
		require.NoError(t, err)
	}
	before := m.OpCacheStats()
	for round := 0; round < 2; round++ {
		for _, x := range xs {
			call1(t, s, "neg", x).Close()
		}
	}
	st := m.OpCacheStats()
	assert.Equal(t, uint64(6), st.Misses-before.Misses, "three shapes through a cache of two: every call misses")
	assert.Equal(t, uint64(4), st.Evictions-before.Evictions)
	assert.Equal(t, int64(2), st.Entries-before.Entries)
	call1(t, s, "neg", xs[2]).Close()
	assert.Equal(t, st.Hits+1, m.OpCacheStats().Hits, "the most recent shape is cached")

	// A kernel registered again under the same name is prepared anew.
	const glslK = `#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer In { float x[]; };
layout(binding = 1) writeonly buffer Out { float y[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < x.length()) y[i] = x[i] + %d.0; }
`
	x, err := tensor.FromSlice(m, []float32{1, 2})
	require.NoError(t, err)
	for k := 1; k <= 2; k++ {
		require.NoError(t, ops.Register("test.streamk", ops.Kernel{GLSL: fmt.Sprintf(glslK, k), Inputs: 1}))
		y, err := tensor.New(m, tensor.Float32, []int{2})
		require.NoError(t, err)
		_, err = s.Call("test.streamk", []*tensor.Tensor{x}, []*tensor.Tensor{y}, ops.Attrs{})
		require.NoError(t, err)
		assert.Equal(t, []float32{1 + float32(k), 2 + float32(k)}, readF32(t, y))
		require.NoError(t, ops.Unregister("test.streamk"))
	}
}

// TestStreamMemory: outputs and inputs closed while calls are queued are
// freed once the calls completed; a closed stream holds nothing.
func TestStreamMemory(t *testing.T) {
	m, _ := testutil.Manager(t)
	base := m.MemStats().Allocations
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	x, err := tensor.FromSlice(m, []float32{1, 2, 3})
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		y := call1(t, s, "exp", x)
		z := call1(t, s, "sum", y)
		require.NoError(t, y.Close())
		require.NoError(t, z.Close())
	}
	require.NoError(t, x.Close())
	require.NoError(t, s.Synchronize(ctxT(t)))
	require.NoError(t, s.Close())
	assert.Equal(t, base, m.MemStats().Allocations, "every tensor freed")
}

// TestStreamQueues: a stream on queue 1 reads what a stream on queue 0
// wrote, and the first overwrites it again, without host waits: the
// cross-queue waits are on the GPU.
func TestStreamQueues(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	s0, err := ops.DefaultStream(m)
	require.NoError(t, err)
	s1, err := ops.NewStream(m, ops.OnQueue(1))
	require.NoError(t, err)
	defer s1.Close()
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	var ys []*tensor.Tensor
	for i := 0; i < 50; i++ {
		_, err := s0.Call("add", []*tensor.Tensor{x, x}, []*tensor.Tensor{x}, ops.Attrs{}) // x *= 2 on queue 0
		require.NoError(t, err)
		ys = append(ys, call1(t, s1, "neg", x)) // reads x on queue 1
	}
	for i, y := range ys {
		k := float32(int64(1) << (i + 1))
		assert.Equal(t, []float32{-k, -2 * k, -3 * k, -4 * k}, readF32(t, y), "read %d", i)
	}
	assert.Zero(t, m.OpCacheStats().HostWaits)
}

// TestStreamManagerClose: closing the Manager with calls queued is clean,
// and later calls fail with ErrClosed.
func TestStreamManagerClose(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	x, err := tensor.New(m, tensor.Float32, []int{1 << 16})
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		_, err := s.Call("add", []*tensor.Tensor{x, x}, []*tensor.Tensor{x}, ops.Attrs{})
		require.NoError(t, err)
	}
	require.NoError(t, m.Close())
	_, err = s.Call("add", []*tensor.Tensor{x, x}, []*tensor.Tensor{x}, ops.Attrs{})
	require.True(t, errors.Is(err, vkflow.ErrClosed), "%v", err)
	_, err = ops.DefaultStream(m)
	require.ErrorIs(t, err, vkflow.ErrClosed)
}

// TestStreamThreadsClose: 6 goroutines make eager calls on the default
// stream and close each input right after the call that reads it, so
// buffers are destroyed on one goroutine while another rewrites and binds
// descriptor sets that named them. Before descriptor sets were pointed at
// the placeholder buffer on their way back to the pool, the validation
// layer invalidated a new command buffer about once per 12,000 calls
// (UNASSIGNED-CoreValidation-DrawState-InvalidCommandBuffer-VkBuffer; the
// same from Python threads in 3 of 4 runs of 36,000 calls).
func TestStreamThreadsClose(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	one, err := tensor.FromSlice(m, []int32{1, 1, 1, 1})
	require.NoError(t, err)
	const workers = 6
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	out := make([]*tensor.Tensor, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			x, err := tensor.FromSlice(m, []int32{int32(w), int32(w), int32(w), int32(w)})
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < streamThreadSteps; i++ {
				name := "add"
				if i%2 == 1 {
					name = "mul"
				}
				outs, err := s.Call(name, []*tensor.Tensor{x, one}, nil, ops.Attrs{})
				if err != nil {
					errs <- err
					return
				}
				_ = x.Close()
				x = outs[0]
			}
			out[w] = x
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for w, x := range out {
		require.NoError(t, x.Wait(ctxT(t)))
		v, err := x.Int32s()
		require.NoError(t, err)
		require.Equal(t, int32(w+streamThreadSteps/2), v[0], "worker %d", w)
	}
}

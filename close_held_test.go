package vkflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// TestCloseHeldThenRelease is the reported sequence (issue 19, defect 2):
// on two logical queues, a consumer that waits on timeline mid is
// submitted, then a producer that waits on gate and signals mid. While both
// are still held, both sequences, both algorithms, the inputs, a Storage
// intermediate and mid are closed; then gate is signalled. Both submits
// must complete with the right values, the queue must go on working (empty
// Evals complete), and every allocation must be freed.
//
// Before the fix this died with SIGSEGV in lavapipe's queue thread when
// run alone, or hung the next empty Eval and corrupted the heap: mid was
// destroyed as soon as the queue's own timeline passed the consumer's
// value, while the driver still had to finish with it.
func TestCloseHeldThenRelease(t *testing.T) {
	for round := range 20 {
		m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		base := m.MemStats().Allocations

		a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
		require.NoError(t, err)
		b, err := tensor.FromSlice(m, []float32{5, 6, 7, 8})
		require.NoError(t, err)
		tmp, err := tensor.New(m, tensor.Float32, []int{4}, tensor.In(tensor.Storage))
		require.NoError(t, err)
		out, err := tensor.New(m, tensor.Float32, []int{4})
		require.NoError(t, err)
		mul, err := kernels.Multiply(m, a, b, tmp)
		require.NoError(t, err)
		add, err := kernels.Add(m, tmp, a, out)
		require.NoError(t, err)
		gate, err := timeline.New(m, 0)
		require.NoError(t, err)
		mid, err := timeline.New(m, 0)
		require.NoError(t, err)

		producer, err := sequence.New(m, 0)
		require.NoError(t, err)
		consumer, err := sequence.New(m, 1)
		require.NoError(t, err)
		producer.Dispatch(mul)
		consumer.Dispatch(add).SyncLocal(out)

		pc := consumer.Submit(ctx, sequence.Wait(mid, 1))
		pp := producer.Submit(ctx, sequence.Wait(gate, 1), sequence.Signal(mid, 1))
		require.NoError(t, pc.Err())
		require.NoError(t, pp.Err())
		require.False(t, pc.Done())

		for _, c := range []interface{ Close() error }{producer, consumer, mul, add, a, b, tmp, mid} {
			require.NoError(t, c.Close())
		}
		require.NoError(t, gate.Signal(1))

		require.NoError(t, pp.Wait(ctx), "round %d: producer", round)
		require.NoError(t, pc.Wait(ctx), "round %d: consumer", round)
		got, err := out.Float32s()
		require.NoError(t, err)
		assert.Equal(t, []float32{6, 14, 24, 36}, got, "round %d", round)

		empty, err := sequence.New(m, 0)
		require.NoError(t, err)
		for i := range 3 {
			require.NoError(t, empty.Eval(ctx), "round %d: empty Eval %d after the release", round, i)
		}
		require.NoError(t, empty.Close())
		require.NoError(t, out.Close())
		require.NoError(t, gate.Close())
		require.Eventually(t, func() bool {
			// An empty Eval collects what the GPU finished with.
			e, err := sequence.New(m, 0)
			if err != nil {
				return false
			}
			defer e.Close()
			return e.Eval(ctx) == nil && m.MemStats().Allocations == base
		}, 5*time.Second, time.Millisecond, "round %d: allocations back to %d", round, base)
		cancel()
		require.NoError(t, m.Close())
	}
}

package opcore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// Tensors of eager calls that are closed right after the call are freed
// once the GPU is done, with no later call on the stream or the Manager:
// the stream's in-flight sequences, which hold them, are reclaimed by the
// completion watcher (issue 22, item 9). Before, they stayed until the
// stream's next Call or Synchronize.
func TestStreamReclaimsWithoutHostCall(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	const n = 1 << 22
	newT := func() *tensor.Tensor {
		x, err := tensor.New(m, tensor.Float32, []int{n})
		require.NoError(t, err)
		return x
	}
	// Warm up: the op's prepared state and the stream's pools exist.
	w1, w2 := newT(), newT()
	_, err = s.Call("add", []*tensor.Tensor{w1, w2}, []*tensor.Tensor{w1}, ops.Attrs{})
	require.NoError(t, err)
	require.NoError(t, s.Synchronize(context.Background()))
	base := m.MemStats().Allocations

	a, b := newT(), newT()
	outs, err := s.Call("add", []*tensor.Tensor{a, b}, nil, ops.Attrs{})
	require.NoError(t, err)
	for _, x := range []*tensor.Tensor{a, b, outs[0]} {
		require.NoError(t, x.Close())
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && m.MemStats().Allocations != base {
		time.Sleep(5 * time.Millisecond) // MemStats only reads counters
	}
	require.Equal(t, base, m.MemStats().Allocations, "closed tensors of an eager call are still held by the idle stream")
}

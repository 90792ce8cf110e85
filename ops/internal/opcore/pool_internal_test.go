package opcore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// TestPoolReusedReadsZero: a buffer the pool hands out again reads as zero,
// like a new one, and is the same buffer (no new allocation).
func TestPoolReusedReadsZero(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	d, err := core.Enter(m)
	require.NoError(t, err)
	spec := outSpec{tensor.Float32, []int{4}}
	x, err := s.pool.output(spec)
	d.Exit()
	require.NoError(t, err)
	require.NoError(t, tensor.Write(x, []float32{1, 2, 3, 4}))
	buf := x.Allocation().Buffer
	require.NoError(t, x.Close()) // no GPU use: destroyed, and kept, at once
	require.Equal(t, 1, s.PoolStats().Buffers)

	d, err = core.Enter(m)
	require.NoError(t, err)
	y, err := s.pool.output(spec)
	d.Exit()
	require.NoError(t, err)
	defer y.Close()
	require.Equal(t, buf, y.Allocation().Buffer, "the kept buffer")
	got, err := y.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{0, 0, 0, 0}, got)
	st := s.PoolStats()
	require.Equal(t, uint64(1), st.Reused)
	require.Equal(t, uint64(1), st.Allocated)
}

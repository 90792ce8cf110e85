package sequence_test

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
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// TestDetachAttach: a detached sequence keeps its recording without its
// tensors' references, pins their buffers (a closed tensor's memory stays
// until Clear), refuses submits and recording, and runs again as recorded
// once the same tensors are attached; other buffers do not attach.
func TestDetachAttach(t *testing.T) {
	ctx := context.Background()
	m, _ := testutil.Manager(t)
	src, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	dst, err := tensor.New(m, tensor.Float32, []int{4})
	require.NoError(t, err)
	other, err := tensor.New(m, tensor.Float32, []int{4})
	require.NoError(t, err)
	defer other.Close()
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	s.Copy(src, dst).SyncLocal(dst)
	require.ErrorIs(t, s.Detach(), vkflow.ErrInvalid, "not built yet")
	require.NoError(t, s.Eval(ctx))
	require.NoError(t, s.Detach())
	assert.True(t, s.Detached())

	require.ErrorIs(t, s.Eval(ctx), vkflow.ErrInvalid, "a detached sequence cannot be submitted")
	require.ErrorIs(t, s.Rerecord(), vkflow.ErrInvalid)

	for _, tc := range []struct {
		name string
		ts   []*tensor.Tensor
	}{
		{"another buffer", []*tensor.Tensor{src, other, other}},
		{"too few", []*tensor.Tensor{src, dst}},
		{"nil", []*tensor.Tensor{src, nil, dst}},
	} {
		ok, err := s.Attach(tc.ts)
		require.NoError(t, err, tc.name)
		assert.False(t, ok, tc.name)
	}

	ok, err := s.Attach([]*tensor.Tensor{src, dst, dst})
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, src.WriteBytes(f32bytes(5, 6, 7, 8)))
	require.NoError(t, s.Eval(ctx))
	v, err := dst.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{5, 6, 7, 8}, v)

	// Detached, the sequence pins the buffers: closing src keeps its
	// memory until Clear.
	require.NoError(t, s.Detach())
	before := m.MemStats().Allocations
	require.NoError(t, src.Close())
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		require.Equal(t, before, m.MemStats().Allocations, "a pinned buffer was freed")
	}
	ok, err = s.Attach([]*tensor.Tensor{src, dst, dst})
	assert.Error(t, err, "a closed tensor does not attach")
	assert.False(t, ok)
	require.NoError(t, s.Clear())
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && m.MemStats().Allocations != before-1; {
		time.Sleep(5 * time.Millisecond)
	}
	assert.Equal(t, before-1, m.MemStats().Allocations, "Clear frees the closed tensor's pinned buffer")
	assert.False(t, s.Detached())
}

func f32bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

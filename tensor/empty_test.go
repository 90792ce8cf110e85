package tensor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
)

// Empty tensors (a dimension of 0) exist, as in NumPy: no elements, and
// every operation on them is valid and does nothing.
func TestEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, shape := range [][]int{{0}, {3, 0}, {0, 5, 2}} {
		for _, mem := range []tensor.Memory{tensor.Device, tensor.Host, tensor.Storage} {
			e, err := tensor.New(m, tensor.Float32, shape, tensor.In(mem))
			require.NoError(t, err, "shape %v", shape)
			assert.Equal(t, 0, e.Len())
			assert.Equal(t, uint64(0), e.Bytes())
			assert.Equal(t, shape, e.Shape())
			if mem == tensor.Storage {
				require.NoError(t, e.Close())
				continue
			}
			got, err := e.Float32s()
			require.NoError(t, err)
			assert.Empty(t, got)
			require.NoError(t, tensor.Write(e, []float32{}))
			require.NoError(t, e.ReadBytes(nil))
			assert.Error(t, tensor.Write(e, []float32{1}))
			require.NoError(t, e.Close())
		}
	}

	// In a sequence: copy, fill and a dispatch over empty tensors.
	a, err := tensor.New(m, tensor.Float32, []int{0})
	require.NoError(t, err)
	b, err := tensor.New(m, tensor.Float32, []int{4, 0})
	require.NoError(t, err)
	out, err := tensor.New(m, tensor.Float32, []int{0})
	require.NoError(t, err)
	mul, err := algorithm.New(m, shaders.Mul, []*tensor.Tensor{a, b, out})
	require.NoError(t, err)
	assert.Equal(t, [3]uint32{0, 1, 1}, mul.Workgroups())
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, s.SyncDevice(a, b).Copy(a, b).Fill(out, float32(1)).Dispatch(mul).SyncLocal(out).Eval(context.Background()))
	require.NoError(t, s.Close())
	require.NoError(t, mul.Close())
}

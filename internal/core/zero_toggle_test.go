package core_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// A buffer handed out while GPU zeroing was off holds live data: turning
// zeroing back on must not zero it with the next fill of its block.
func TestZeroingBackOnKeepsLiveData(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory())
	d := m.Runtime()
	d.SetGPUZeroing(false)
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	d.SetGPUZeroing(true)
	y, err := tensor.New(m, tensor.Float32, []int{4})
	require.NoError(t, err)
	got, err := x.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4}, got)
	got, err = y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, 0, 0}, got)
	require.NoError(t, x.Close())
	require.NoError(t, y.Close())
}

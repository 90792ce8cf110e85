package tensor_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// Shapes whose element count or byte size overflows, or exceeds what the
// device can hold in one buffer, are ErrInvalid before anything is
// allocated.
func TestSizeLimits(t *testing.T) {
	m, _ := testutil.Manager(t)
	lim := m.Device().Limits
	maxRange := int(lim.MaxStorageBufferRange)
	tests := []struct {
		name  string
		dtype tensor.Dtype
		shape []int
	}{
		{"bytes overflow uint64 (1<<62+1 float32)", tensor.Float32, []int{1<<62 + 1}},
		{"bytes wrap to a small size (1<<62 float32)", tensor.Float32, []int{1 << 62}},
		{"bytes overflow int (float64)", tensor.Float64, []int{1 << 61}},
		{"bytes overflow across dims", tensor.Float32, []int{1 << 31, 1 << 31}},
		{"elements overflow", tensor.Uint8, []int{math.MaxInt / 2, 3}},
		{"elements at MaxInt", tensor.Uint8, []int{math.MaxInt}},
		{"one byte over maxStorageBufferRange", tensor.Uint8, []int{maxRange + 1}},
		{"over maxStorageBufferRange in float16", tensor.Float16, []int{maxRange/2 + 1}},
	}
	if a := lim.MaxMemoryAllocationSize; a != 0 && a < 1<<40 {
		tests = append(tests, struct {
			name  string
			dtype tensor.Dtype
			shape []int
		}{"over maxMemoryAllocationSize", tensor.Uint8, []int{int(a) + 1}})
	}
	for _, tt := range tests {
		for _, mem := range []tensor.Memory{tensor.Device, tensor.Host, tensor.Storage} {
			t.Run(tt.name+"/"+mem.String(), func(t *testing.T) {
				before := m.MemStats()
				x, err := tensor.New(m, tt.dtype, tt.shape, tensor.In(mem))
				require.ErrorIs(t, err, vkflow.ErrInvalid, "got tensor %v", x)
				assert.Nil(t, x)
				assert.Equal(t, before, m.MemStats(), "nothing allocated")
			})
		}
		t.Run(tt.name+"/Adopt", func(t *testing.T) {
			// A view of a (fake) 4-byte buffer: Adopt must refuse before
			// it touches the allocation.
			a := core.View(1, 4, 1, 0)
			x, err := tensor.Adopt(m.Runtime(), a, tt.dtype, tt.shape, false, nil)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Nil(t, x)
		})
	}
	assert.NotZero(t, lim.MaxMemoryAllocationSize, "maxMemoryAllocationSize is queried")
}

// The largest tensor the device allows is accepted.
func TestSizeAtLimit(t *testing.T) {
	m, _ := testutil.Manager(t)
	n := min(int(m.Device().Limits.MaxStorageBufferRange), int(m.Device().Limits.MaxMemoryAllocationSize))
	x, err := tensor.New(m, tensor.Uint8, []int{n}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	assert.Equal(t, uint64(n), x.Bytes())
	require.NoError(t, x.Close())
}

// maxStorageBufferRange bounds a descriptor's range, which is the
// tensor's bytes, not its buffer's 4-byte padding: with a limit that is
// not a multiple of 4 (NVIDIA reports 2^32-1), a tensor of exactly that
// many bytes is accepted, one more byte is not.
func TestSizeAtOddStorageBufferRange(t *testing.T) {
	m, _ := testutil.Manager(t)
	lim := &m.Runtime().Info.Limits
	saved := lim.MaxStorageBufferRange
	t.Cleanup(func() { lim.MaxStorageBufferRange = saved })
	lim.MaxStorageBufferRange = 1<<20 - 1
	require.Equal(t, uint64(1<<20-1), tensor.MaxBytes(m.Runtime()))
	x, err := tensor.New(m, tensor.Uint8, []int{1<<20 - 1}, tensor.In(tensor.Storage))
	require.NoError(t, err, "a tensor of MaxBytes bytes")
	require.NoError(t, x.Close())
	_, err = tensor.New(m, tensor.Uint8, []int{1 << 20}, tensor.In(tensor.Storage))
	require.ErrorIs(t, err, vkflow.ErrInvalid)
}

package dlpack

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
)

// Two zero-copy host imports of overlapping host memory (two NumPy slices
// of one array, say) are one memory to vkCmdCopyBuffer, though each has a
// VkDeviceMemory of its own: Copy rejects regions that overlap through
// them, and accepts disjoint ones.
func TestCopyOverlapHostImports(t *testing.T) {
	m, _ := testutil.Manager(t)
	vals := make([]float32, 48)
	for i := range vals {
		vals[i] = float32(i)
	}
	mt1, data := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{32}, data: f32bytes(vals...)}.build()
	a, copied, err := Import(ctx, m, mt1)
	require.NoError(t, err)
	defer a.Close()
	require.False(t, copied)
	// b is the 32 floats from float 16 of the same memory (64 bytes in,
	// which meets the import alignment): a legacy DLTensor's data pointer
	// is the managed tensor's first field.
	mt2, _ := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{32}, nullData: true}.build()
	*(*unsafe.Pointer)(mt2.ptr) = unsafe.Add(data, 64)
	b, copied, err := Import(ctx, m, mt2)
	require.NoError(t, err)
	defer b.Close()
	require.False(t, copied)

	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	err = s.Copy(a, b).Eval(ctx)
	require.ErrorIs(t, err, vkflow.ErrInvalid, "a's floats 16-31 are b's 0-15")
	assert.Contains(t, err.Error(), "region 0's destination overlaps region 0's source")

	require.NoError(t, s.Clear())
	require.NoError(t, s.Copy(a, b, sequence.Region{Src: 0, Dst: 16, Len: 16}).SyncLocal(b).Eval(ctx))
	got := unsafe.Slice((*float32)(data), 48)
	for i := range 48 {
		want := float32(i)
		if i >= 32 {
			want = float32(i - 32)
		}
		assert.Equal(t, want, got[i], "float %d", i)
	}
}

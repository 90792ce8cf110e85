package interop_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
)

// The memory outlives its exporter: an fd exported before the tensor and
// its Manager were closed still imports, with the data.
func TestImportAfterExporterClosed(t *testing.T) {
	a, b := pair(t)
	want := []int32{3, 1, 4, 1, 5, 9, 2, 6}
	x, err := tensor.New(a, tensor.Int32, []int{len(want)}, tensor.Exportable())
	require.NoError(t, err)
	require.NoError(t, tensor.Write(x, want))
	h, err := interop.Export(x)
	require.NoError(t, err)
	require.NoError(t, x.Close())
	require.NoError(t, a.Close())

	y, err := interop.Import(b, h, tensor.Int32, []int{len(want)})
	require.NoError(t, err)
	got, err := y.Int32s()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	require.NoError(t, tensor.Write(y, []int32{0, 0, 0, 0, 0, 0, 0, 7}), "the import is writable")
	got, err = y.Int32s()
	require.NoError(t, err)
	assert.Equal(t, int32(7), got[7])
}

// Closing either side never invalidates the other: an importer closed
// first leaves the exporter's tensor alone, an exporter closed first (with
// its Manager) leaves the imports readable. Several imports, one of them
// into the exporting Manager itself, are views of one memory.
func TestCloseEitherSide(t *testing.T) {
	a, b := pair(t)
	x, err := tensor.New(a, tensor.Uint8, []int{4096}, tensor.Exportable())
	require.NoError(t, err)
	imp := func(m interop.Owner) *tensor.Tensor {
		h, err := interop.Export(x)
		require.NoError(t, err)
		y, err := interop.Import(m, h, tensor.Uint8, []int{4096})
		require.NoError(t, err)
		return y
	}
	y1, y2, self := imp(b), imp(b), imp(a)
	data := make([]uint8, 4096)
	for i := range data {
		data[i] = uint8(i * 7)
	}
	require.NoError(t, tensor.Write(y1, data))
	for _, v := range []*tensor.Tensor{x, y2, self} {
		got, err := v.Uint8s()
		require.NoError(t, err)
		assert.Equal(t, data, got)
	}
	require.NoError(t, y1.Close())
	require.NoError(t, self.Close())
	data[0] = 42
	require.NoError(t, tensor.Write(x, data), "the exporter after an importer closed")
	got, err := y2.Uint8s()
	require.NoError(t, err)
	assert.Equal(t, uint8(42), got[0])

	require.NoError(t, a.Close())
	got, err = y2.Uint8s()
	require.NoError(t, err)
	assert.Equal(t, data, got, "an import after the exporting Manager closed")
}

// Exportable tensors and imports count in MemStats like other allocations
// (one block and one buffer each, a vkAllocateMemory each) and leave no
// trace once closed.
func TestMemStats(t *testing.T) {
	a, b := pair(t)
	// Warm up what Managers keep for reuse (the staging ring, an empty
	// shared block), so that the baseline is stable.
	w, err := tensor.New(a, tensor.Float32, []int{4})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	baseA, baseB := a.MemStats(), b.MemStats()

	x, err := tensor.New(a, tensor.Float32, []int{1000}, tensor.Exportable())
	require.NoError(t, err)
	sa := a.MemStats()
	assert.Equal(t, baseA.Blocks+1, sa.Blocks)
	assert.Equal(t, baseA.Allocations+1, sa.Allocations)
	assert.Equal(t, baseA.TotalAllocs+1, sa.TotalAllocs)
	assert.Equal(t, baseA.BlockBytes+4000, sa.BlockBytes, "a block of the buffer's size: never a shared block")

	h, err := interop.Export(x)
	require.NoError(t, err)
	y, err := interop.Import(b, h, tensor.Float32, []int{1000})
	require.NoError(t, err)
	sb := b.MemStats()
	assert.Equal(t, baseB.Blocks+1, sb.Blocks)
	assert.Equal(t, baseB.Allocations+1, sb.Allocations)
	assert.Equal(t, baseB.TotalAllocs+1, sb.TotalAllocs)
	assert.Equal(t, baseB.HostClears, sb.HostClears, "an import keeps the exporter's data")

	require.NoError(t, x.Close())
	require.NoError(t, y.Close())
	sa, sb = a.MemStats(), b.MemStats()
	assert.Equal(t, baseA.Blocks, sa.Blocks)
	assert.Equal(t, baseA.Allocations, sa.Allocations)
	assert.Equal(t, baseA.BlockBytes, sa.BlockBytes)
	assert.Equal(t, baseB.Blocks, sb.Blocks)
	assert.Equal(t, baseB.Allocations, sb.Allocations)
	assert.Equal(t, baseB.BlockBytes, sb.BlockBytes)
}

// Each Export returns a new fd that the caller owns; a successful Import
// takes it over (the process has no more fds open afterwards than before
// the Export), and closing the tensors releases what the driver held.
func TestFDOwnership(t *testing.T) {
	a, b := pair(t)
	base := openFDs(t)
	x, err := tensor.New(a, tensor.Float32, []int{64}, tensor.Exportable())
	require.NoError(t, err)
	withTensor := openFDs(t) // lavapipe keeps a memfd per exportable allocation
	h1, err := interop.Export(x)
	require.NoError(t, err)
	h2, err := interop.Export(x)
	require.NoError(t, err)
	assert.NotEqual(t, h1.FD, h2.FD, "each Export makes a new fd")
	assert.Equal(t, withTensor+2, openFDs(t))

	y, err := interop.Import(b, h1, tensor.Float32, []int{64})
	require.NoError(t, err)
	assert.Equal(t, withTensor+1, openFDs(t), "Import consumed h1.FD")
	require.NoError(t, syscall.Close(h2.FD), "h2.FD is still the caller's")
	assert.Equal(t, withTensor, openFDs(t))

	require.NoError(t, y.Close())
	require.NoError(t, x.Close())
	assert.Equal(t, base, openFDs(t), "closing both sides releases everything")
}

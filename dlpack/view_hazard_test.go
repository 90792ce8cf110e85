package dlpack

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// frontView exports src as kDLVulkan and imports its first n float32
// elements as a view on the same VkBuffer; the caller closes the view and
// deletes the export.
func frontView(t *testing.T, m *vkflow.Manager, src *tensor.Tensor, n int64) (*tensor.Tensor, Managed) {
	t.Helper()
	dev := Device{Vulkan, int32(m.Device().Index)}
	ex, err := Export(ctx, src, Options{Device: &dev})
	require.NoError(t, err)
	vb := unsafe.Slice((*byte)(unsafe.Pointer(ex.Vulkan())), unsafe.Sizeof(VulkanBuffer{}))
	mt, _ := foreign{dev: dev, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{n}, data: vb}.build()
	view, _, err := Import(ctx, m, mt)
	require.NoError(t, err)
	return view, ex
}

// A kDLVulkan view covering the front of its producer's buffer shares the
// producer's hazard state across submits: a read of the view after a
// write of the whole buffer must not make the write look visible to a
// later read of the whole buffer (the view's barrier covers only its own
// range). Synchronization validation reports the missed read-after-write.
func TestViewHazardAcrossSubmits(t *testing.T) {
	m, _ := testutil.Manager(t)
	src, err := tensor.New(m, tensor.Float32, []int{8})
	require.NoError(t, err)
	view, ex := frontView(t, m, src, 3)
	part, err := tensor.New(m, tensor.Float32, []int{3})
	require.NoError(t, err)
	host, err := tensor.New(m, tensor.Float32, []int{8}, tensor.In(tensor.Host))
	require.NoError(t, err)

	seqs := make([]*sequence.Sequence, 3)
	for i := range seqs {
		seqs[i], err = sequence.New(m, 0)
		require.NoError(t, err)
	}
	seqs[0].Fill(src, float32(4))           // writes the whole buffer
	seqs[1].Copy(view, part)                // reads its first 12 bytes
	seqs[2].Copy(src, host).SyncLocal(host) // reads all of it
	for round := 0; round < 2; round++ {
		p0, p1, p2 := seqs[0].EvalAsync(), seqs[1].EvalAsync(), seqs[2].EvalAsync()
		require.NoError(t, p0.Wait(ctx))
		require.NoError(t, p1.Wait(ctx))
		require.NoError(t, p2.Wait(ctx))
		got, err := host.Float32s()
		require.NoError(t, err)
		assert.Equal(t, []float32{4, 4, 4, 4, 4, 4, 4, 4}, got)
	}
	for _, s := range seqs {
		require.NoError(t, s.Close())
	}
	require.NoError(t, view.Close())
	ex.Delete()
	for _, x := range []*tensor.Tensor{part, host, src} {
		require.NoError(t, x.Close())
	}
}

// A tensor and a view of its buffer in one sequence are one buffer to the
// barriers inside the command buffer and across submits.
func TestViewAndProducerInOneSequence(t *testing.T) {
	m, _ := testutil.Manager(t)
	src, err := tensor.New(m, tensor.Float32, []int{8})
	require.NoError(t, err)
	view, ex := frontView(t, m, src, 3)
	part, err := tensor.New(m, tensor.Float32, []int{3}, tensor.In(tensor.Host))
	require.NoError(t, err)
	host, err := tensor.New(m, tensor.Float32, []int{8}, tensor.In(tensor.Host))
	require.NoError(t, err)

	a, err := sequence.New(m, 0)
	require.NoError(t, err)
	b, err := sequence.New(m, 0)
	require.NoError(t, err)
	// a: read the view, then write the whole buffer; b: write the view.
	a.Copy(view, part).Fill(src, float32(4)).SyncLocal(part)
	b.Fill(view, float32(9)).Copy(src, host).SyncLocal(host)
	for round := 0; round < 2; round++ {
		pa, pb := a.EvalAsync(), b.EvalAsync()
		require.NoError(t, pa.Wait(ctx))
		require.NoError(t, pb.Wait(ctx))
		got, err := host.Float32s()
		require.NoError(t, err)
		assert.Equal(t, []float32{9, 9, 9, 4, 4, 4, 4, 4}, got)
	}
	for _, x := range []interface{ Close() error }{a, b, view} {
		require.NoError(t, x.Close())
	}
	ex.Delete()
	for _, x := range []*tensor.Tensor{part, host, src} {
		require.NoError(t, x.Close())
	}
}

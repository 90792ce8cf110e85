package dlpack

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// Fill on a zero-copy host import whose byte size is not a multiple of 4
// writes every byte of the tensor and none of the producer's bytes after
// it.
func TestFillImportedOddSize(t *testing.T) {
	m, _ := testutil.Manager(t)
	tests := []struct {
		name  string
		dt    DataType
		n     int64 // elements
		value any
		want  []byte // one element's bytes
	}{
		{"uint8 x7", DataType{codeUInt, 8, 1}, 7, uint8(0xab), []byte{0xab}},
		{"uint8 x5", DataType{codeUInt, 8, 1}, 5, uint8(0x11), []byte{0x11}},
		{"uint8 x1", DataType{codeUInt, 8, 1}, 1, uint8(0x5a), []byte{0x5a}},
		{"int8 x3", DataType{codeInt, 8, 1}, 3, int8(-2), []byte{0xfe}},
		{"float16 x3", DataType{codeFloat, 16, 1}, 3, tensor.HalfFrom(1), []byte{0x00, 0x3c}},
		{"float16 x1", DataType{codeFloat, 16, 1}, 1, tensor.Half(0x1234), []byte{0x34, 0x12}},
		{"uint16 x9", DataType{codeUInt, 16, 1}, 9, uint16(0xbeef), []byte{0xef, 0xbe}},
	}
	const guard = 16
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size := int(tt.n) * int(tt.dt.Bits/8)
			init := bytes.Repeat([]byte{0xee}, size+guard)
			mt, data := foreign{dev: Device{CPU, 0}, dt: tt.dt, ndim: 1, shape: []int64{tt.n}, data: init}.build()
			x, copied, err := Import(ctx, m, mt)
			require.NoError(t, err)
			defer x.Close()
			require.False(t, copied, "zero-copy import")
			s, err := sequence.New(m, 0)
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.Fill(x, tt.value).Eval(ctx))
			got := unsafe.Slice((*byte)(data), size+guard)
			assert.Equal(t, bytes.Repeat(tt.want, int(tt.n)), got[:size], "the tensor's bytes")
			assert.Equal(t, bytes.Repeat([]byte{0xee}, guard), got[size:], "the producer's bytes after the tensor")
		})
	}
}

// Fill on a kDLVulkan view fills the view's range, not the producer's
// whole buffer.
func TestFillVulkanView(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, mem := range []tensor.Memory{tensor.Device, tensor.Storage} {
		src, err := tensor.New(m, tensor.Float32, []int{8}, tensor.In(mem))
		require.NoError(t, err)
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		require.NoError(t, s.Fill(src, float32(1)).Eval(ctx))
		view, ex := frontView(t, m, src, 3)
		require.NoError(t, s.Clear())
		require.NoError(t, s.Fill(view, float32(7)).Eval(ctx))
		host, err := tensor.New(m, tensor.Float32, []int{8}, tensor.In(tensor.Host))
		require.NoError(t, err)
		require.NoError(t, s.Clear())
		require.NoError(t, s.Copy(src, host).SyncLocal(host).Eval(ctx))
		got, err := host.Float32s()
		require.NoError(t, err)
		assert.Equal(t, []float32{7, 7, 7, 1, 1, 1, 1, 1}, got, "%v", mem)
		require.NoError(t, s.Close())
		require.NoError(t, view.Close())
		ex.Delete()
		require.NoError(t, host.Close())
		require.NoError(t, src.Close())
	}
}

// The tail patterns of Fill on odd-sized imports do not pile up in a
// sequence that is cleared and re-recorded with new values: Clear frees
// them.
func TestFillPatternsFreedByClear(t *testing.T) {
	m, _ := testutil.Manager(t)
	mt, data := foreign{dev: Device{CPU, 0}, dt: DataType{codeUInt, 8, 1}, ndim: 1, shape: []int64{7}, data: make([]byte, 7)}.build()
	x, copied, err := Import(ctx, m, mt)
	require.NoError(t, err)
	defer x.Close()
	require.False(t, copied)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	var first int
	for i := range 200 {
		require.NoError(t, s.Clear())
		require.NoError(t, s.Fill(x, uint8(i)).Eval(ctx))
		if i == 0 {
			first = m.MemStats().Allocations
		}
	}
	assert.Equal(t, bytes.Repeat([]byte{199}, 7), unsafe.Slice((*byte)(data), 7))
	assert.Equal(t, first, m.MemStats().Allocations, "allocations after 200 Clear+Fill rounds")
}

package interop_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// seeing runs f while m's device sees its memory types without the flags
// in drop, as a discrete GPU's exportable memory type is (device-local
// only: the NVIDIA H200 gave exportable buffers no host-visible type). The
// flags come back before f's tensors are read or written, so the staging
// ring, which needs a host-visible type, still has lavapipe's one.
func seeing(m *vkflow.Manager, drop uint32, f func()) {
	d := m.Runtime()
	saved := d.Info.MemoryTypes
	types := append([]vk.MemoryType(nil), saved...)
	for i := range types {
		types[i].Flags &^= drop
	}
	d.Info.MemoryTypes = types
	defer func() { d.Info.MemoryTypes = saved }()
	f()
}

// An export or import in a memory type the host cannot map is not mapped
// (mapping it is VUID-vkMapMemory-memory-00682), and the tensor's host
// reads and writes go through copies; memory that is host-visible but not
// coherent is mapped at offset 0 and flushed and invalidated. Bytes written
// on either side, by the host or the GPU, are read on the other.
func TestImportUnmappableMemory(t *testing.T) {
	const hostBits = vk.MemoryHostVisible | vk.MemoryHostCoherent | vk.MemoryHostCached
	tests := []struct {
		name                         string
		exporterDrops, importerDrops uint32
		exporterMaps, importerMaps   bool
	}{
		{"device-local only on both sides", hostBits, hostBits, false, false},
		{"only the importer cannot map", 0, hostBits, true, false},
		{"the importer's type is not coherent", 0, vk.MemoryHostCoherent, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := pair(t)
			if !visible(a) {
				t.Skip("no host-visible memory type: nothing to force")
			}
			const n = 1000
			var x, y *tensor.Tensor
			var h interop.MemoryHandle
			var err error
			seeing(a, tt.exporterDrops, func() {
				x, err = tensor.New(a, tensor.Float32, []int{n}, tensor.Exportable())
				require.NoError(t, err)
				h, err = interop.Export(x)
				require.NoError(t, err)
			})
			defer x.Close()
			// The importer takes the memory type from the handle; what it
			// may do with it is its own device's flags for that type.
			seeing(b, tt.importerDrops, func() {
				y, err = interop.Import(b, h, tensor.Float32, []int{n})
				require.NoError(t, err)
			})
			defer y.Close()
			assert.Equal(t, tt.exporterMaps, x.Allocation().Mapped != nil, "exporter mapped")
			assert.Equal(t, tt.importerMaps, y.Allocation().Mapped != nil, "importer mapped")
			if !tt.importerMaps {
				assert.False(t, y.Mapped())
			}
			assert.Equal(t, make([]float32, n), float32s(t, y), "a new exportable tensor reads as zero through the import")

			ramp := make([]float32, n)
			for i := range ramp {
				ramp[i] = float32(i) + 0.5
			}
			require.NoError(t, tensor.Write(x, ramp))
			assert.Equal(t, ramp, float32s(t, y), "the exporter's host write, read by the importer")
			for i := range ramp {
				ramp[i] = -ramp[i]
			}
			require.NoError(t, tensor.Write(y, ramp))
			assert.Equal(t, ramp, float32s(t, x), "the importer's host write, read by the exporter")
			want := gpuWrite(t, b, y, fillFloat32, rand.New(rand.NewPCG(1, 2)))
			assert.Equal(t, want, readBytes(t, x), "the importer's GPU write, read by the exporter")
		})
	}
}

// visible reports whether m's device has a host-visible memory type.
func visible(m *vkflow.Manager) bool {
	for _, mt := range m.Runtime().Info.MemoryTypes {
		if mt.Flags&vk.MemoryHostVisible != 0 {
			return true
		}
	}
	return false
}

func float32s(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	require.NoError(t, err)
	return append([]float32(nil), v...)
}

package core

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkflow/vkflow/vk"
)

// discreteGPU is a discrete GPU's memory (the NVIDIA H200's shape, with a
// resizable BAR): device-local memory on heap 0, host memory on heap 1, and
// a host-visible device-local type on heap 0.
func discreteGPU(staged bool) *Device {
	const (
		local  = vk.MemoryDeviceLocal
		host   = vk.MemoryHostVisible | vk.MemoryHostCoherent
		cached = vk.MemoryHostCached
	)
	return &Device{Staged: staged, Info: vk.PhysicalDeviceInfo{
		Name: "discrete",
		MemoryHeaps: []vk.MemoryHeap{
			{Size: 140 << 30, Flags: vk.HeapDeviceLocal},
			{Size: 64 << 30},
		},
		MemoryTypes: []vk.MemoryType{
			{Flags: 0, Heap: 1},
			{Flags: local, Heap: 0},
			{Flags: host, Heap: 1},
			{Flags: host | cached, Heap: 1},
			{Flags: local | host, Heap: 0},
		},
		Limits: vk.Limits{NonCoherentAtomSize: 64},
	}}
}

// Which memory type an exportable or imported buffer gets among the types
// its buffer allows, and whether it is mapped: on the NVIDIA H200 the
// exportable buffers' types left out the host-visible device-local one, so
// the Device memory chosen is device-local only and must not be mapped
// (VUID-vkMapMemory-memory-00682), which lavapipe's one host-visible type
// cannot show. Memory that is host-visible but not coherent is mapped only
// at offsets Flush and Invalidate can start at.
func TestExternalMemoryType(t *testing.T) {
	for _, tc := range []struct {
		name    string
		staged  bool
		kind    MemKind
		allowed uint32
		offset  uint64
		want    uint32
		ok      bool
		maps    bool
	}{
		{"Device, every type allowed: the BAR", false, MemDevice, 0b11111, 0, 4, true, true},
		{"Device, exportable types without the BAR", false, MemDevice, 0b01111, 0, 1, true, false},
		{"Device staged", true, MemDevice, 0b11111, 0, 1, true, false},
		{"Host among exportable types", false, MemHost, 0b01111, 0, 3, true, true},
		{"Host, device-local types only", false, MemHost, 0b00010, 0, 0, false, false},
		{"Storage", false, MemStorage, 0b11111, 0, 1, true, false},
	} {
		d := discreteGPU(tc.staged)
		typ, flags, ok := d.chooseType(tc.kind, tc.allowed)
		assert.Equal(t, tc.ok, ok, tc.name)
		if !ok {
			continue
		}
		assert.Equal(t, tc.want, typ, tc.name)
		assert.Equal(t, tc.maps, d.mapsExternal(flags, tc.offset, tc.kind), "%s: mapped", tc.name)
	}

	// An import takes the exporter's type: mapped only if host-visible
	// here, and if not coherent, only at a multiple of nonCoherentAtomSize.
	d := discreteGPU(false)
	for _, tc := range []struct {
		name   string
		flags  uint32
		offset uint64
		maps   bool
	}{
		{"device-local only", vk.MemoryDeviceLocal, 0, false},
		{"coherent, any offset", vk.MemoryHostVisible | vk.MemoryHostCoherent, 4, true},
		{"not coherent, offset 0", vk.MemoryHostVisible | vk.MemoryHostCached, 0, true},
		{"not coherent, offset 128", vk.MemoryHostVisible | vk.MemoryHostCached, 128, true},
		{"not coherent, offset 16", vk.MemoryHostVisible | vk.MemoryHostCached, 16, false},
	} {
		assert.Equal(t, tc.maps, d.mapsExternal(tc.flags, tc.offset, MemDevice), tc.name)
	}
}

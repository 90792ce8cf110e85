package vk_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/vk"
)

// Without the fd extensions enabled, the KHR calls are errors that name
// the extension and match ErrNotSupported; nothing reaches the driver.
func TestExternalNotEnabled(t *testing.T) {
	_, dev, _, info := device(t)
	assert.NotEqual(t, [16]byte{}, info.DriverUUID, "VkPhysicalDeviceIDProperties::driverUUID")
	assert.False(t, dev.ExternalMemoryFD())
	assert.False(t, dev.ExternalSemaphoreFD())
	_, err := dev.MemoryFD(1)
	assert.ErrorIs(t, err, vk.ErrNotSupported)
	assert.ErrorContains(t, err, vk.ExternalMemoryFDExtension)
	_, err = dev.ImportMemoryFD(0, 4096, 0, 0)
	assert.ErrorContains(t, err, vk.ExternalMemoryFDExtension)
	for _, err := range []error{
		func() error { _, err := dev.CreateExportableTimeline(0); return err }(),
		func() error { _, err := dev.SemaphoreFD(1); return err }(),
		dev.ImportSemaphoreFD(1, 0),
	} {
		assert.ErrorIs(t, err, vk.ErrNotSupported)
		assert.ErrorContains(t, err, vk.ExternalSemaphoreFDExtension)
	}
}

// With VK_KHR_external_memory_fd: a dedicated exportable allocation exports
// an fd that a second device imports, and both see the same bytes.
func TestExternalMemoryFD(t *testing.T) {
	inst, _, _, info := device(t)
	if !info.HasExtension(vk.ExternalMemoryFDExtension) {
		t.Skipf("%s lacks %s", info.Name, vk.ExternalMemoryFDExtension)
	}
	pds, err := inst.PhysicalDevices()
	require.NoError(t, err)
	const usage = vk.BufferUsageStorage | vk.BufferUsageTransferDst
	s := vk.ExternalBufferSupport(pds[0], usage, vk.ExternalMemoryOpaqueFD)
	require.True(t, s.Exportable && s.Importable, "%+v", s)
	assert.NotZero(t, s.Compatible&vk.ExternalMemoryOpaqueFD)
	t.Logf("opaque fd buffers: %+v; timelines: %+v", s, vk.ExternalTimelineSupport(pds[0], vk.ExternalSemaphoreOpaqueFD))

	open := func() *vk.Device {
		d, err := vk.CreateDevice(pds[0], vk.DeviceConfig{
			Queues:     []vk.QueueRequest{{Family: 0, Count: 1}},
			Features:   vk.Features{TimelineSemaphore: true},
			Extensions: []string{vk.ExternalMemoryFDExtension},
			APIVersion: min(info.APIVersion, vk.MakeVersion(1, 2, 0)),
		})
		require.NoError(t, err)
		t.Cleanup(d.Destroy)
		require.True(t, d.ExternalMemoryFD())
		return d
	}
	a, b := open(), open()
	alloc := func(d *vk.Device, fd int) (vk.Buffer, vk.DeviceMemory, []byte) {
		buf, err := d.CreateExternalBuffer(4096, usage, vk.ExternalMemoryOpaqueFD)
		require.NoError(t, err)
		t.Cleanup(func() { d.DestroyBuffer(buf) })
		req := d.BufferMemoryRequirements(buf)
		// The test maps the memory: a host-visible type (lavapipe's only
		// type is; a discrete GPU's first is not).
		typ, ok := hostVisibleType(info.MemoryTypes, req.TypeBits)
		if !ok {
			t.Skipf("%s has no host-visible memory type for external buffers (types %#x)", info.Name, req.TypeBits)
		}
		var mem vk.DeviceMemory
		if fd < 0 {
			mem, err = d.AllocateExportableMemory(req.Size, typ, vk.ExternalMemoryOpaqueFD, buf)
		} else {
			mem, err = d.ImportMemoryFD(fd, req.Size, typ, buf)
		}
		require.NoError(t, err)
		t.Cleanup(func() { d.FreeMemory(mem) })
		require.NoError(t, d.BindBufferMemory(buf, mem, 0))
		p, err := d.MapMemory(mem, 0, vk.WholeSize)
		require.NoError(t, err)
		t.Cleanup(func() { d.UnmapMemory(mem) })
		return buf, mem, unsafeBytes(p, 4096)
	}
	_, mem, pa := alloc(a, -1)
	fd, err := a.MemoryFD(mem)
	require.NoError(t, err)
	require.GreaterOrEqual(t, fd, 0)
	copy(pa, "shared bytes")
	_, _, pb := alloc(b, fd)
	assert.Equal(t, "shared bytes", string(pb[:12]))
}

func unsafeBytes(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }

// hostVisibleType is the first memory type in bits that is host-visible
// and coherent.
func hostVisibleType(types []vk.MemoryType, bits uint32) (uint32, bool) {
	const want = vk.MemoryHostVisible | vk.MemoryHostCoherent
	for i, mt := range types {
		if bits&(1<<i) != 0 && mt.Flags&want == want {
			return uint32(i), true
		}
	}
	return 0, false
}

// TestHostVisibleType: the type TestExternalMemoryFD maps is host-visible
// on a discrete GPU's memory types too (the NVIDIA H200's first type is
// device-local only: mapping it was VUID-vkMapMemory-memory-00682), which
// lavapipe's one type cannot show.
func TestHostVisibleType(t *testing.T) {
	const local, host = vk.MemoryDeviceLocal, vk.MemoryHostVisible | vk.MemoryHostCoherent
	for _, tc := range []struct {
		name  string
		types []vk.MemoryType
		bits  uint32
		want  uint32
		ok    bool
	}{
		{"lavapipe", []vk.MemoryType{{Flags: local | host}}, 1, 0, true},
		{"discrete", []vk.MemoryType{{Flags: local}, {Flags: host}, {Flags: local | host}}, 0b111, 1, true},
		{"allowed types only", []vk.MemoryType{{Flags: local}, {Flags: host}, {Flags: local | host}}, 0b101, 2, true},
		{"none", []vk.MemoryType{{Flags: local}, {Flags: vk.MemoryHostVisible}}, 0b11, 0, false},
	} {
		got, ok := hostVisibleType(tc.types, tc.bits)
		assert.Equal(t, tc.ok, ok, tc.name)
		if ok {
			assert.Equal(t, tc.want, got, tc.name)
		}
	}
}

// SignalSharedSemaphore is a valid host signal (under validation, on any
// semaphore), and it records what proves the layer's report
// VUID-VkSemaphoreSignalInfo-value-03259 false for that semaphore, until
// the semaphore is destroyed. lavapipe cannot export timelines, so the
// layer's own report cannot be drawn here: the message is the 1.3.239
// layer's text for this semaphore's handle.
func TestSignalSharedSemaphore(t *testing.T) {
	_, dev, _, _ := device(t)
	sem, err := dev.CreateTimeline(1)
	require.NoError(t, err)
	report := func(value, pending uint64) vk.Message {
		return vk.Message{Severity: vk.SeverityError, Types: vk.MessageValidation, ID: "VUID-VkSemaphoreSignalInfo-value-03259",
			Text: fmt.Sprintf("Validation Error: [ VUID-VkSemaphoreSignalInfo-value-03259 ] Object 0: handle = 0x%x, type = VK_OBJECT_TYPE_SEMAPHORE; | MessageID = 0x9b2f7a8 | "+
				"vkSignalSemaphore(): value (%d) must be less than value of any pending signal operation (%d) for semaphore VkSemaphore 0x%x[].", uint64(sem), value, pending, uint64(sem))}
	}
	_, known := vk.KnownFalsePositive(report(5, 1))
	assert.False(t, known, "before any shared signal")

	cur, err := dev.SemaphoreValue(sem)
	require.NoError(t, err)
	require.NoError(t, dev.SignalSharedSemaphore(sem, 5, cur))
	v, err := dev.SemaphoreValue(sem)
	require.NoError(t, err)
	assert.Equal(t, uint64(5), v)
	why, known := vk.KnownFalsePositive(report(5, 1))
	assert.True(t, known)
	assert.Contains(t, why, "counter was at 1")
	_, known = vk.KnownFalsePositive(report(5, 2))
	assert.False(t, known, "a pending signal above the counter read before the signal may be real")

	dev.DestroySemaphore(sem)
	_, known = vk.KnownFalsePositive(report(5, 1))
	assert.False(t, known, "a destroyed semaphore's handle may come back")
}

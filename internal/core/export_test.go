package core

import "github.com/vkflow/vkflow/vk"

// ForgetHostCached makes d see none of its memory types as host-cached, as
// on a discrete GPU whose device-local memory is mapped through a
// resizable BAR. Call it before d allocates anything.
func ForgetHostCached(d *Device) {
	types := append([]vk.MemoryType(nil), d.Info.MemoryTypes...)
	for i := range types {
		types[i].Flags &^= vk.MemoryHostCached
	}
	d.Info.MemoryTypes = types
}

// SetStagingMax caps the staging ring at n bytes until restore is called.
func SetStagingMax(n uint64) (restore func()) {
	old := stagingMax
	stagingMax = n
	return func() { stagingMax = old }
}

// ForceTimelineSupport makes TimelineSupport see s as the driver's answer
// for timeline semaphores, and records the handle types asked for in
// asked, until restore is called.
func ForceTimelineSupport(s vk.ExternalSupport, asked *[]uint32) (restore func()) {
	old := externalTimelineSupport
	externalTimelineSupport = func(_ vk.PhysicalDevice, handleType uint32) vk.ExternalSupport {
		*asked = append(*asked, handleType)
		return s
	}
	return func() { externalTimelineSupport = old }
}

// TimerStarted reports whether c started its timer (Done was called).
func (c *Deadline) TimerStarted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t != nil
}

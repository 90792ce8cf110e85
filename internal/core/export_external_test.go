package core

import "github.com/vkflow/vkflow/vk"

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

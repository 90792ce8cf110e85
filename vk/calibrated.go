package vk

// #include "vk.h"
import "C"

// CalibratedTimestampsExtension is VK_EXT_calibrated_timestamps: the
// device's timestamp counter read together with a host clock.
const CalibratedTimestampsExtension = "VK_EXT_calibrated_timestamps"

// MonotonicCalibrateable reports whether pd, of instance i, described by
// info, can read its timestamp counter together with CLOCK_MONOTONIC: it
// has CalibratedTimestampsExtension with both time domains
// (vkGetPhysicalDeviceCalibrateableTimeDomainsEXT).
func (i *Instance) MonotonicCalibrateable(pd PhysicalDevice, info *PhysicalDeviceInfo) bool {
	return info.HasExtension(CalibratedTimestampsExtension) && C.vkflowMonotonicCalibrateable(i.handle, pd) != 0
}

// CalibratedTimestamps reads the device's timestamp counter (ticks) and
// CLOCK_MONOTONIC (ns) together (vkGetCalibratedTimestampsEXT), with the
// maximum deviation between the two samples in ns. The device must have
// been created with CalibratedTimestampsExtension on a device
// MonotonicCalibrateable reports true for.
func (d *Device) CalibratedTimestamps() (gpu, hostNs, deviationNs uint64, err error) {
	var g, h, dev C.uint64_t
	r := C.vkflowCalibratedTimestamps(d.handle, &g, &h, &dev)
	return uint64(g), uint64(h), uint64(dev), check("vkGetCalibratedTimestampsEXT", r)
}

// MonotonicNs reads CLOCK_MONOTONIC in ns, the host clock of
// CalibratedTimestamps.
func MonotonicNs() uint64 { return uint64(C.vkflowMonotonicNs()) }

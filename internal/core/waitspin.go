package core

import (
	"sync/atomic"

	"github.com/vkflow/vkflow/vk"
)

// A host wait on a timeline (a tensor read, Pending.Wait, Synchronize, a
// timeline's Wait) first polls the semaphore for Device.WaitSpin, yielding
// the CPU between polls, and sleeps in vkWaitSemaphores only when the value
// is not reached by then (vk.Device.WaitSemaphoreSpin), as CUDA's
// cudaDeviceScheduleYield waits. A short GPU round trip then costs the
// waiting thread no sleep and no wake-up, which on lavapipe were about half
// of a one-dispatch round trip. The poll is part of the wait's first slice
// (waitSlice), so it lasts at most that long whatever WaitSpin says. The
// completion watcher's background waits never poll.

// WaitStats count the host waits on timelines that reached the driver: a
// wait for a value already seen completed returns before and is not
// counted. A wait counts once, by how its first slice ended.
type WaitStats struct {
	Polled  uint64 // ended while polling, within WithWaitSpin: no sleep
	Blocked uint64 // went on to vkWaitSemaphores (the spin ran out, or it is 0)
}

type waitCounters struct{ polled, blocked atomic.Uint64 }

// WaitStats returns the host wait counters.
func (d *Device) WaitStats() WaitStats {
	return WaitStats{Polled: d.waits.polled.Load(), Blocked: d.waits.blocked.Load()}
}

// waitState is one host wait's: first until its first slice ran, polled
// when that slice ended while polling.
type waitState struct{ first, polled bool }

// waitSlice is one bounded slice of a host wait for sem to reach v: the
// first (w.first set, then cleared) polls for WaitSpin before it blocks,
// and counts the wait; later slices block at once. It allocates nothing.
func (d *Device) waitSlice(sem vk.Semaphore, v uint64, w *waitState, timeout uint64) error {
	if !w.first {
		return d.VK.WaitSemaphore(sem, v, timeout)
	}
	w.first = false
	polled, err := d.VK.WaitSemaphoreSpin(sem, v, uint64(d.WaitSpin), timeout)
	w.polled = polled
	if polled {
		d.waits.polled.Add(1)
	} else {
		d.waits.blocked.Add(1)
	}
	return err
}

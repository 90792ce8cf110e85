package vk

/*
#include "vk.h"
*/
import "C"

import (
	"unsafe"

	"github.com/vkflow/vkflow/internal/fault"
)

// Timeline semaphores: creation, the counter, host waits and signals.

// CreateTimeline creates a timeline semaphore with an initial value.
func (d *Device) CreateTimeline(initial uint64) (Semaphore, error) {
	r := C.vkflowCreateTimeline(d.handle, C.uint64_t(initial))
	return Semaphore(r.handle), check("vkCreateSemaphore", r.result)
}

// DestroySemaphore destroys a semaphore.
func (d *Device) DestroySemaphore(s Semaphore) {
	forgetSemaphore(s)
	C.vkflowDestroySemaphore(d.handle, C.uint64_t(s))
}

// SemaphoreValue returns a timeline semaphore's current value.
func (d *Device) SemaphoreValue(s Semaphore) (uint64, error) {
	if r, ok := injected(fault.SemaphoreCounterValue); ok {
		return 0, check("vkGetSemaphoreCounterValue", r)
	}
	r := C.vkflowSemaphoreValue(d.handle, C.uint64_t(s))
	return uint64(r.value), check("vkGetSemaphoreCounterValue", r.result)
}

// errWaitTimeout is returned for every timed-out wait, so that waiting in
// slices allocates nothing.
var errWaitTimeout = &Error{Call: "vkWaitSemaphores", Result: Timeout}

func checkWait(r C.VkResult) error {
	if Result(r) == Timeout {
		return errWaitTimeout
	}
	return check("vkWaitSemaphores", r)
}

// WaitSemaphore waits until s reaches value or timeoutNs passes; a timeout
// is an *Error matching ErrTimeout. It allocates nothing, timeouts included.
func (d *Device) WaitSemaphore(s Semaphore, value, timeoutNs uint64) error {
	if r, ok := injected(fault.WaitSemaphores); ok {
		return checkWait(r)
	}
	return checkWait(C.vkflowWaitSemaphore(d.handle, C.uint64_t(s), C.uint64_t(value), C.uint64_t(timeoutNs)))
}

// WaitSemaphores waits until all (or, with any, one) of sems reach their
// values. The slices must have equal length; keep them in long-lived
// scratch to avoid allocation.
func (d *Device) WaitSemaphores(sems []Semaphore, values []uint64, any bool, timeoutNs uint64) error {
	if len(sems) == 0 {
		return nil
	}
	if r, ok := injected(fault.WaitSemaphores); ok {
		return checkWait(r)
	}
	a := C.int(0)
	if any {
		a = 1
	}
	return checkWait(C.vkflowWaitSemaphores(d.handle, C.uint32_t(len(sems)),
		(*C.uint64_t)(unsafe.Pointer(&sems[0])), (*C.uint64_t)(unsafe.Pointer(&values[0])), a, C.uint64_t(timeoutNs)))
}

// WaitSemaphoreSpin is WaitSemaphore that first polls the semaphore's
// counter (vkGetSemaphoreCounterValue, yielding the CPU between polls) for
// up to spinNs of timeoutNs, and blocks in vkWaitSemaphores for the rest
// only when the value was not reached by then: one cgo call either way. A
// value reached while polling costs the thread no sleep and no wake-up,
// which on a short GPU round trip is most of its latency. spun reports
// that the wait ended while polling. An error of a poll is reported as the
// wait's. spinNs 0 is WaitSemaphore. It allocates nothing.
func (d *Device) WaitSemaphoreSpin(s Semaphore, value, spinNs, timeoutNs uint64) (spun bool, err error) {
	if spinNs == 0 {
		return false, d.WaitSemaphore(s, value, timeoutNs)
	}
	if r, ok := injected(fault.WaitSemaphores); ok {
		return false, checkWait(r)
	}
	r := C.vkflowWaitSemaphoreSpin(d.handle, C.uint64_t(s), C.uint64_t(value), C.uint64_t(spinNs), C.uint64_t(timeoutNs))
	return r.value == 1, checkWait(r.result)
}

// WatchSemaphore is WaitSemaphore without fault injection (package
// internal/fault): the runtime's completion watcher waits with it in the
// background, where an injected failure would hit a wait that no test
// step made, and the counts of a test's calls would vary from run to run.
// It allocates nothing.
func (d *Device) WatchSemaphore(s Semaphore, value, timeoutNs uint64) error {
	return checkWait(C.vkflowWaitSemaphore(d.handle, C.uint64_t(s), C.uint64_t(value), C.uint64_t(timeoutNs)))
}

// SignalSemaphore sets a timeline semaphore's value from the host.
func (d *Device) SignalSemaphore(s Semaphore, value uint64) error {
	return check("vkSignalSemaphore", C.vkflowSignalSemaphore(d.handle, C.uint64_t(s), C.uint64_t(value)))
}

package core

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vkflow/vkflow/vk"
)

// The gate keeps Close from destroying what a call in flight uses. Every
// API call that makes Vulkan calls enters it for its short duration (never
// across a whole blocking wait: waits enter it per slice, and a call that
// waits on something else while inside, such as a held submit's release,
// derives its context from Device.Closing). Close sets closed, then waits
// until no call is inside; a call that enters after that fails with
// ErrClosed, so after the drain Close owns the device, but for the
// completion watcher's parked waits, which Close joins before destroying
// anything (watcher.go).
//
// The gate is a counter rather than an RWMutex so that a call may enter
// again from inside (tensor.New entering Alloc and Upload): an inner Enter
// after Close started fails with ErrClosed while the outer call still
// holds its place, and Close waits for it.

// gate is embedded in Device.
type gate struct {
	inflight atomic.Int64 // calls inside the gate

	lostMu  sync.Mutex
	lostErr error // the first VK_ERROR_DEVICE_LOST
}

// Enter admits an API call: ErrClosed once Close has started, ErrDeviceLost
// once the device is lost. Every successful Enter needs one Exit.
func (d *Device) Enter() error {
	d.inflight.Add(1)
	if d.closed.Load() {
		d.inflight.Add(-1)
		return Closed("Manager")
	}
	if d.lost.Load() {
		d.inflight.Add(-1)
		return d.Lost()
	}
	return nil
}

// enter admits a call that frees or closes: it fails only once Close has
// started, not after device loss.
func (d *Device) enter() bool {
	d.inflight.Add(1)
	if d.closed.Load() {
		d.inflight.Add(-1)
		return false
	}
	return true
}

// Exit leaves the gate.
func (d *Device) Exit() { d.inflight.Add(-1) }

// Enter returns o's device after entering its gate; see Device.Enter. The
// caller must Exit.
func Enter(o Owner) (*Device, error) {
	d, err := From(o)
	if err != nil {
		return nil, err
	}
	if err := d.Enter(); err != nil {
		return nil, err
	}
	return d, nil
}

// drain waits until no call is inside the gate. Called by Close after
// setting closed, so no new call gets in.
func (d *Device) drain() {
	pause := time.Microsecond
	for d.inflight.Load() != 0 {
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// Lost returns the error every call returns once the device is lost; nil
// while it is not.
func (d *Device) Lost() error {
	if !d.lost.Load() {
		return nil
	}
	d.lostMu.Lock()
	defer d.lostMu.Unlock()
	return fmt.Errorf("vkflow: the device was lost earlier (%w)", d.lostErr)
}

// Check notes device loss in err, for vkflow's packages that make Vulkan
// calls of their own, and returns err unchanged.
func (d *Device) Check(err error) error { return d.check(err) }

// check notes device loss in err and returns err unchanged: after
// VK_ERROR_DEVICE_LOST every later call fails with ErrDeviceLost.
func (d *Device) check(err error) error {
	if err != nil && errors.Is(err, vk.ErrDeviceLost) && !d.lost.Load() {
		d.lostMu.Lock()
		if d.lostErr == nil {
			d.lostErr = err
			d.Log.Error("vkflow: device lost; every later call fails", "err", err)
		}
		d.lostMu.Unlock()
		d.lost.Store(true)
	}
	return err
}

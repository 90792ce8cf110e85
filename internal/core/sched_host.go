package core

import (
	"fmt"
	"strings"
	"time"
)

// HostSignal signals t to v from the host and releases the submits that
// were waiting for it. v must exceed every value reserved or signalled, and
// no GPU signal of t may be pending (held back or submitted and not yet
// completed): Vulkan requires a host signal to stay below every pending
// signal, while vkflow requires it above every reserved value, so the two
// only meet once the GPU's signals have landed.
func (d *Device) HostSignal(t *Timeline, v uint64) error {
	if err := d.Enter(); err != nil {
		return err
	}
	defer d.Exit()
	sc := &d.sched
	sc.mu.Lock()
	if d.closed.Load() {
		sc.mu.Unlock()
		return Closed("Manager")
	}
	if f := t.fail.Load(); f != nil {
		sc.mu.Unlock()
		return f.err // a failed timeline stays failed (failure.go)
	}
	if v <= t.reserved {
		sc.mu.Unlock()
		return Invalid("timeline values must increase: Signal(%d) after %d", v, t.reserved)
	}
	cur, err := d.gpuSignalsLanded(t, v)
	if err != nil {
		sc.mu.Unlock()
		return err
	}
	if t.shared {
		// The validation layer loses track of external timelines and
		// may report this signal as overtaking a pending signal at or
		// below cur (VUID-VkSemaphoreSignalInfo-value-03259); the counter
		// has passed cur, so vk turns that report into information.
		err = d.VK.SignalSharedSemaphore(t.Sem, v, cur)
	} else {
		err = d.VK.SignalSemaphore(t.Sem, v)
	}
	if err != nil {
		sc.mu.Unlock()
		return d.check(err)
	}
	t.reserved = v
	sc.promise(t, v)
	ready := sc.drain(d)
	sc.mu.Unlock()
	finish(ready)
	return nil
}

// gpuSignalsLanded returns t's counter once it has reached every value a
// submit signals on it and is below v, else an error naming the pending
// value or the counter. Called with the scheduler lock held, so no new GPU
// signal can be accepted meanwhile. The counter is queried every time:
// code sharing the VkDevice (a DLPack consumer) may have signalled t
// itself, and Vulkan requires a host signal above the current value.
func (d *Device) gpuSignalsLanded(t *Timeline, v uint64) (uint64, error) {
	cur, err := d.VK.SemaphoreValue(t.Sem)
	if err != nil {
		return 0, d.check(err)
	}
	if v <= cur {
		return 0, Invalid("Signal(%d): the timeline is at %d already (signalled outside vkflow); a host signal must exceed the current value", v, cur)
	}
	if cur >= t.gpu {
		return cur, nil
	}
	state := "submitted and not yet completed"
	if t.promised < t.gpu {
		state = "held back until its own waits are signalled"
	}
	return 0, Invalid("Signal(%d): a GPU signal of %d on this timeline is still pending (%s; value now %d): "+
		"a host signal may not overtake a pending GPU signal; wait for %d first", v, t.gpu, state, cur, t.gpu)
}

// Held returns descriptions of the submits still held back, in acceptance
// order.
func (d *Device) Held() []string {
	sc := &d.sched
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []string
	for s := sc.first; s != nil; s = s.next {
		var ws []string
		for _, w := range s.Waits {
			if w.TL.unpromised(w.Value) {
				ws = append(ws, fmt.Sprintf("timeline %#x at %d (promised %d)", uint64(w.TL.Sem), w.Value, w.TL.promised))
			}
		}
		for i, p := range s.Signals {
			if t := p.TL; firstOf(s.Signals, i) && t.head < len(t.signallers) && t.signallers[t.head] != s {
				ws = append(ws, fmt.Sprintf("an earlier held signal of timeline %#x", uint64(t.Sem)))
			}
		}
		out = append(out, fmt.Sprintf("submit on logical queue %d (physical %d), held %v, waiting for %s",
			s.Logical, s.Q.Index, time.Since(s.since).Round(time.Millisecond), strings.Join(ws, ", ")))
	}
	return out
}

// dropHeld fails every held submit with err (at Close: they never reached
// the driver, so their resources can be freed).
func (d *Device) dropHeld(err error) []string {
	held := d.Held()
	sc := &d.sched
	sc.mu.Lock()
	var ss []*Submission
	for s := sc.first; s != nil; s = s.next {
		ss = append(ss, s)
	}
	for _, s := range ss {
		for _, w := range s.Waits {
			w.TL.waiters = nil
		}
		for _, p := range s.Signals {
			p.TL.signallers, p.TL.head = nil, 0
		}
		s.prev, s.next = nil, nil
	}
	sc.first, sc.last, sc.held, sc.ready = nil, nil, 0, nil
	sc.mu.Unlock()
	for _, s := range ss {
		s.err = err
	}
	finish(ss)
	return held
}

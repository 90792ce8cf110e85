package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vkflow/vkflow/vk"
)

// Timeline is the scheduler's view of a user timeline semaphore: which
// values have been promised (a signal submitted to the driver, or signalled
// from the host) and which are reserved by accepted submits.
type Timeline struct {
	Sem      vk.Semaphore
	dev      *Device
	promised uint64 // guarded by the scheduler lock
	reserved uint64 // guarded by the scheduler lock
}

// NewTimeline creates the scheduler state for a semaphore created at
// initial.
func (d *Device) NewTimeline(sem vk.Semaphore, initial uint64) *Timeline {
	return &Timeline{Sem: sem, dev: d, promised: initial, reserved: initial}
}

// Device returns the timeline's device.
func (t *Timeline) Device() *Device { return t.dev }

// Point is a value on a timeline; Stage is the pipeline stage a wait blocks
// (ignored for signals).
type Point struct {
	TL    *Timeline
	Value uint64
	Stage uint32
}

// Submission is a command buffer with timeline waits and signals on its way
// to a queue. It may be held by the scheduler until every point it waits on
// has been promised.
type Submission struct {
	Q       *Queue
	Cmd     vk.CommandBuffer
	Hazards *Hazards // Cmd's buffer uses, nil if untracked (hazard.go)
	Waits   []Point
	Signals []Point
	// After lists values of other physical queues' timelines, already
	// submitted, that the submit also waits for.
	After []QueuePoint
	// OnRelease runs once the submit reached the driver (v is the queue
	// timeline value) or failed (err), under no lock of the scheduler's.
	OnRelease func(v uint64, err error)
	// Logical is the logical queue index, for StuckError reports.
	Logical int

	released chan struct{}
	value    uint64
	err      error
	since    time.Time
}

// QueuePoint is a value of physical queue Queue's own timeline.
type QueuePoint struct {
	Queue int
	Value uint64
}

// scheduler holds submits back until their waits are promised, so the
// driver never sees a wait whose signal it has not been given: with a
// single queue such a wait deadlocks the queue.
type scheduler struct {
	mu   sync.Mutex
	held []*Submission
	// scratch for building a vk.Submit, reused under mu
	sub vk.Submit
}

// Schedule accepts s: its signal values must exceed every value reserved or
// signalled before on their timelines, and it is released to the driver as
// soon as its waits are promised and earlier held signals on the same
// timelines are released. It returns an error, before anything reaches the
// driver, for a non-increasing signal or a timeline of another device.
func (d *Device) Schedule(s *Submission) error {
	for _, ps := range [2][]Point{s.Waits, s.Signals} {
		for _, p := range ps {
			if p.TL == nil {
				return Invalid("nil timeline")
			}
			if p.TL.dev != d {
				return Invalid("timeline belongs to another Manager")
			}
		}
	}
	sc := &d.sched
	sc.mu.Lock()
	// Checked under the lock that Close's dropHeld takes, so no submit is
	// accepted after the held ones were dropped.
	if d.closed.Load() {
		sc.mu.Unlock()
		return Closed("Manager")
	}
	for i, p := range s.Signals {
		last := p.TL.reserved
		for _, q := range s.Signals[:i] {
			if q.TL == p.TL {
				last = max(last, q.Value)
			}
		}
		if p.Value <= last {
			sc.mu.Unlock()
			return Invalid("timeline values must increase: signal %d after %d", p.Value, last)
		}
	}
	for _, p := range s.Signals {
		p.TL.reserved = p.Value
	}
	s.released = make(chan struct{})
	s.since = time.Now()
	sc.held = append(sc.held, s)
	ready := sc.drain(d)
	sc.mu.Unlock()
	finish(ready)
	return nil
}

// HostSignal signals t to v from the host and releases the submits that
// were waiting for it. v must exceed every value reserved or signalled.
func (d *Device) HostSignal(t *Timeline, v uint64) error {
	sc := &d.sched
	sc.mu.Lock()
	if d.closed.Load() {
		sc.mu.Unlock()
		return Closed("Manager")
	}
	if v <= t.reserved {
		sc.mu.Unlock()
		return Invalid("timeline values must increase: Signal(%d) after %d", v, t.reserved)
	}
	if err := d.VK.SignalSemaphore(t.Sem, v); err != nil {
		sc.mu.Unlock()
		return err
	}
	t.reserved, t.promised = v, v
	ready := sc.drain(d)
	sc.mu.Unlock()
	finish(ready)
	return nil
}

// drain submits every held submission that has become ready, in
// acceptance order, repeating while submits make others ready. It returns
// the released submissions for finish. Called with mu held.
func (sc *scheduler) drain(d *Device) []*Submission {
	var done []*Submission
	for progress := true; progress; {
		progress = false
		for i := 0; i < len(sc.held); i++ {
			s := sc.held[i]
			if !sc.ready(i) {
				continue
			}
			sc.held = append(sc.held[:i], sc.held[i+1:]...)
			i--
			s.value, s.err = sc.submit(s)
			if s.err == nil {
				for _, p := range s.Signals {
					p.TL.promised = max(p.TL.promised, p.Value)
				}
			}
			done = append(done, s)
			progress = true
		}
	}
	return done
}

// ready reports whether held[i] may go to the driver: every wait promised,
// and no earlier held submit signals one of its timelines.
func (sc *scheduler) ready(i int) bool {
	s := sc.held[i]
	for _, w := range s.Waits {
		if w.TL.promised < w.Value {
			return false
		}
	}
	for _, earlier := range sc.held[:i] {
		for _, a := range earlier.Signals {
			for _, b := range s.Signals {
				if a.TL == b.TL {
					return false
				}
			}
		}
	}
	return true
}

func (sc *scheduler) submit(s *Submission) (uint64, error) {
	b := &sc.sub
	b.Cmd = s.Cmd
	b.WaitSems, b.WaitValues, b.WaitStages = b.WaitSems[:0], b.WaitValues[:0], b.WaitStages[:0]
	b.SignalSems, b.SignalValues = b.SignalSems[:0], b.SignalValues[:0]
	for _, w := range s.Waits {
		stage := w.Stage
		if stage == 0 {
			stage = vk.StageAllCommands
		}
		b.WaitSems = append(b.WaitSems, w.TL.Sem)
		b.WaitValues = append(b.WaitValues, w.Value)
		b.WaitStages = append(b.WaitStages, stage)
	}
	for _, a := range s.After {
		b.WaitSems = append(b.WaitSems, s.Q.dev.queues[a.Queue].sem)
		b.WaitValues = append(b.WaitValues, a.Value)
		b.WaitStages = append(b.WaitStages, vk.StageAllCommands)
	}
	for _, p := range s.Signals {
		b.SignalSems = append(b.SignalSems, p.TL.Sem)
		b.SignalValues = append(b.SignalValues, p.Value)
	}
	s.Q.Lock()
	v, err := s.Q.SubmitLocked(b, s.Hazards)
	s.Q.Unlock()
	return v, err
}

// finish runs release callbacks and wakes waiters, outside the lock.
func finish(ss []*Submission) {
	for _, s := range ss {
		if s.OnRelease != nil {
			s.OnRelease(s.value, s.err)
		}
		close(s.released)
	}
}

// Released returns a channel closed once the submission reached the driver
// or failed.
func (s *Submission) Released() <-chan struct{} { return s.released }

// Result returns the queue timeline value and the submit error; valid once
// Released is closed.
func (s *Submission) Result() (uint64, error) { return s.value, s.err }

// WaitReleased blocks until s is released or ctx ends.
func (s *Submission) WaitReleased(ctx context.Context) error {
	select {
	case <-s.released:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Held returns descriptions of the submits still held back.
func (d *Device) Held() []string {
	sc := &d.sched
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []string
	for _, s := range sc.held {
		var ws []string
		for _, w := range s.Waits {
			if w.TL.promised < w.Value {
				ws = append(ws, fmt.Sprintf("timeline %#x at %d (promised %d)", uint64(w.TL.Sem), w.Value, w.TL.promised))
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
	ss := sc.held
	sc.held = nil
	sc.mu.Unlock()
	for _, s := range ss {
		s.err = err
	}
	finish(ss)
	return held
}

package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vkflow/vkflow/vk"
)

// Timeline is the scheduler's view of a user timeline semaphore: which
// values have been promised (a signal submitted to the driver, or signalled
// from the host) and which are reserved by accepted submits, plus the
// scheduler's index of the held submits that involve it.
type Timeline struct {
	Sem      vk.Semaphore
	dev      *Device
	obj      *Object // the semaphore's lifetime; nil for none
	promised uint64  // guarded by the scheduler lock
	reserved uint64  // guarded by the scheduler lock
	// gpu is the highest value an accepted submit signals (held or
	// submitted): until the counter reaches it, a GPU signal may be
	// pending. Guarded by the scheduler lock.
	gpu uint64
	// waiters are the waits of held submits on this timeline for values not
	// yet promised: a min-heap by value, popped as promised advances.
	waiters []waiter
	// signallers are the held submits that signal this timeline, in
	// acceptance order from signallers[head]; only the first may be
	// released, so signals of one timeline reach the driver in order.
	signallers []*Submission
	head       int
	// shared timelines are signalled outside this device too (exported or
	// imported: exportmem.go), so the scheduler never holds a wait on one
	// back. exportable ones were created for export. Set before first use.
	shared, exportable bool
	// fail is set once a value of the timeline failed (failure.go); read
	// without the lock by host waits, written under it.
	fail atomic.Pointer[failure]
	// lastQ and last are the physical queue and value of the last signal
	// of t handed to the driver (sched_submit.go). Guarded by the
	// scheduler lock.
	lastQ *Queue
	last  uint64
	// recoverable: failures are bounded, not sticky (failure.go,
	// SetRecoverable). Set before first use.
	recoverable bool
}

// NewTimeline creates the scheduler state for a semaphore created at
// initial, whose lifetime is obj (nil for a semaphore that outlives every
// submit). Every accepted submit holds a reference on obj until it reached
// the driver (and then marks its use with its queue value) or was dropped,
// so that no order of Close calls destroys a semaphore that a held or
// running batch still uses.
func (d *Device) NewTimeline(sem vk.Semaphore, initial uint64, obj *Object) *Timeline {
	return &Timeline{Sem: sem, dev: d, obj: obj, promised: initial, reserved: initial, gpu: initial}
}

// unpromised reports whether a wait for v must be held back: nothing has
// promised v, and no one outside the device may signal it (shared).
// Called with the scheduler lock held.
func (t *Timeline) unpromised(v uint64) bool { return !t.shared && t.promised < v }

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

	// Scheduler state, guarded by its lock.
	seq        uint64      // acceptance order
	blocked    int         // unpromised waits + signalled timelines where an earlier held submit comes first
	held       bool        // blocked when accepted (a trace's "held" span)
	dead       bool        // failed while held (failure.go): skipped where it is still indexed
	prev, next *Submission // the held list, in acceptance order
}

// QueuePoint is a value of physical queue Queue's own timeline.
type QueuePoint struct {
	Queue int
	Value uint64
}

// waiter is one held submit's wait for value on a timeline.
type waiter struct {
	value uint64
	s     *Submission
}

// scheduler holds submits back until their waits are promised, so the
// driver never sees a wait whose signal it has not been given: with a
// single queue such a wait deadlocks the queue.
//
// Held submits are indexed, not scanned: each counts what still blocks it
// (its unpromised waits, kept in per-timeline heaps by value, and the
// timelines it signals where an earlier held submit signals first, kept in
// per-timeline queues). Promising a value or releasing a submit decrements
// the counts it unblocks, and a count reaching zero makes the submit ready,
// so releasing n submits costs O(n log n) in all instead of a rescan of
// every held submit at every step. Ready submits go to the driver in
// acceptance order.
type scheduler struct {
	mu          sync.Mutex
	first, last *Submission // held, in acceptance order
	held        int         // length of the held list
	max         int         // bound on held submits that are blocked
	seq         uint64
	ready       []*Submission // min-heap by seq
	// scratch for building a vk.Submit, reused under mu
	sub vk.Submit
}

// DefaultMaxHeld is the default bound on held submits.
const DefaultMaxHeld = 65536

// firstOf reports whether s.Signals[i] is the first signal of its timeline
// in s (a submit may signal one timeline more than once).
func firstOf(ps []Point, i int) bool {
	for _, q := range ps[:i] {
		if q.TL == ps[i].TL {
			return false
		}
	}
	return true
}

// Schedule accepts s: its signal values must exceed every value reserved or
// signalled before on their timelines, and it is released to the driver as
// soon as its waits are promised and earlier held signals on the same
// timelines are released. It returns an error, before anything reaches the
// driver, for a non-increasing signal, a timeline of another device, or
// (wrapping ErrBusy) a submit that would be held while the bound on held
// submits is reached.
func (d *Device) Schedule(s *Submission) error {
	one := [1]*Submission{s}
	return d.ScheduleAll(one[:])
}

// hold takes a reference on every timeline s waits on or signals: they
// stay alive while s is held, and until s's batch is retired (drain marks
// their use). It fails with ErrClosed, holding nothing, when one is
// closed.
func (s *Submission) hold() error {
	for i, p := range s.Waits {
		if p.TL.obj != nil && !p.TL.obj.TryAcquire() {
			s.releaseTimelines(s.Waits[:i])
			return Closed("timeline")
		}
	}
	for i, p := range s.Signals {
		if p.TL.obj != nil && !p.TL.obj.TryAcquire() {
			s.releaseTimelines(s.Waits)
			s.releaseTimelines(s.Signals[:i])
			return Closed("timeline")
		}
	}
	return nil
}

// unhold drops every reference hold took.
func (s *Submission) unhold() {
	s.releaseTimelines(s.Waits)
	s.releaseTimelines(s.Signals)
}

func (s *Submission) releaseTimelines(ps []Point) {
	for _, p := range ps {
		if p.TL.obj != nil {
			p.TL.obj.Release()
		}
	}
}

// markTimelines records that queue value v (s's batch) uses s's timelines.
func (s *Submission) markTimelines(v uint64) {
	for _, ps := range [2][]Point{s.Waits, s.Signals} {
		for _, p := range ps {
			if p.TL.obj != nil {
				p.TL.obj.MarkUse(s.Q.Index, v)
			}
		}
	}
}

// accept adds s, checked by check, to the held list (and the ready heap
// when nothing blocks it). A submit that waits on a failed point, or
// signals a failed timeline, fails at once instead (failure.go), with
// what it would have signalled; failed submits go to *done. Called with
// mu held.
func (sc *scheduler) accept(s *Submission, done *[]*Submission) {
	s.released = make(chan struct{})
	s.since = time.Now()
	if fe := s.failedWait(); fe != nil {
		s.dead, s.err = true, fe
		*done = append(*done, s)
		for i, p := range s.Signals {
			if firstOf(s.Signals, i) {
				sc.failTimeline(p.TL, p.Value, fe, done)
			}
		}
		return
	}
	blocked := 0
	for _, w := range s.Waits {
		if w.TL.unpromised(w.Value) {
			blocked++
		}
	}
	for i, p := range s.Signals {
		if firstOf(s.Signals, i) && p.TL.head < len(p.TL.signallers) {
			blocked++
		}
	}
	for _, p := range s.Signals {
		p.TL.reserved = max(p.TL.reserved, p.Value)
		p.TL.gpu = max(p.TL.gpu, p.Value)
	}
	sc.seq++
	s.seq, s.blocked, s.held = sc.seq, blocked, blocked > 0
	sc.link(s)
	for _, w := range s.Waits {
		if w.TL.unpromised(w.Value) {
			w.TL.pushWaiter(waiter{w.Value, s})
		}
	}
	for i, p := range s.Signals {
		if firstOf(s.Signals, i) {
			p.TL.signallers = append(p.TL.signallers, s)
		}
	}
	if blocked == 0 {
		sc.pushReady(s)
	}
}

// CheckSignals reports, without reserving anything, whether a submit
// accepted now could signal ps: every timeline of this device, and every
// value above what its timeline has reserved or signalled (increasing
// within ps too). Schedule checks again; this lets a caller that submits
// several batches refuse a bad signal before the first one.
func (d *Device) CheckSignals(ps []Point) error {
	sc := &d.sched
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for i, p := range ps {
		if p.TL == nil {
			return Invalid("nil timeline")
		}
		if p.TL.dev != d {
			return Invalid("timeline belongs to another Manager")
		}
		if err := signalAfter(ps, i, p.TL.reserved); err != nil {
			return err
		}
	}
	return nil
}

// signalAfter checks that ps[i] exceeds base, what its timeline has
// reserved, and every signal of the same timeline before it in ps.
func signalAfter(ps []Point, i int, base uint64) error {
	last := base
	for _, q := range ps[:i] {
		if q.TL == ps[i].TL {
			last = max(last, q.Value)
		}
	}
	if ps[i].Value <= last {
		return Invalid("timeline values must increase: signal %d after %d", ps[i].Value, last)
	}
	return nil
}

// promise records that t will reach v (a signal submitted or done) and
// unblocks the held waits it satisfies. Called with mu held.
func (sc *scheduler) promise(t *Timeline, v uint64) {
	if v <= t.promised {
		return
	}
	t.promised = v
	if f := t.fail.Load(); f != nil && f.to != 0 && v > f.to {
		t.fail.Store(nil) // recovered: the counter will pass the failed values
	}
	for len(t.waiters) > 0 && t.waiters[0].value <= v {
		s := t.popWaiter().s
		if s.dead {
			continue
		}
		if s.blocked--; s.blocked == 0 {
			sc.pushReady(s)
		}
	}
}

// drain submits every ready submission, in acceptance order, including
// those that earlier releases make ready. It returns the released
// submissions for finish. Called with mu held.
func (sc *scheduler) drain(d *Device) []*Submission {
	var done []*Submission
	for len(sc.ready) > 0 {
		s := sc.popReady()
		sc.unlink(s)
		s.value, s.err = sc.submit(s)
		for i, p := range s.Signals {
			if !firstOf(s.Signals, i) {
				continue
			}
			t := p.TL
			// s was first among t's held signallers (that made it ready).
			t.signallers[t.head] = nil
			t.head++
			if s.err == nil && t.head < len(t.signallers) {
				n := t.signallers[t.head]
				if n.blocked--; n.blocked == 0 {
					sc.pushReady(n)
				}
			}
			t.compact()
		}
		done = append(done, s)
		if s.err == nil {
			s.markTimelines(s.value)
			for _, p := range s.Signals {
				sc.promise(p.TL, p.Value)
			}
			continue
		}
		// The failed submit's signals never land: its timelines fail from
		// those values, and everything held downstream with them.
		s.dead = true
		var first uint64 // the failed value the error names
		if len(s.Signals) > 0 {
			first = s.Signals[0].Value
		}
		fe := asFailed(s.err, first, fmt.Sprintf("vkQueueSubmit on logical queue %d", s.Logical))
		for i, p := range s.Signals {
			if firstOf(s.Signals, i) {
				sc.failTimeline(p.TL, p.Value, fe, &done)
			}
		}
	}
	return done
}

// finish runs release callbacks, drops the submits' timeline references
// and wakes waiters, outside the lock.
func finish(ss []*Submission) {
	for _, s := range ss {
		if s.OnRelease != nil {
			s.OnRelease(s.value, s.err)
		}
		s.unhold()
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

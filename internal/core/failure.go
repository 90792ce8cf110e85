package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/vkflow/vkflow/internal/minheap"
	"github.com/vkflow/vkflow/vk"
)

// Failures travel along timelines.
//
// A timeline point whose producer can no longer signal it (the producer's
// vkQueueSubmit failed, the producer itself waited on a failed point, or
// the timeline was closed with no accepted submit signalling that far) is
// failed, and so is every later point of that timeline: a timeline's
// failure is sticky, like an IREE semaphore's failure state or CUDA's
// sticky stream errors. Values below the first failed one are unaffected
// (earlier producers still signal them).
//
// What fails with it, at once and with the same *FailedError (which
// errors.Is the root cause):
//   - every held submit that waits on a failed point, and every held submit
//     that signals the failed timeline at or past the failed value; each
//     of those fails the timelines it signals in turn, so a failure reaches
//     everything downstream of it in the DAG and nothing else;
//   - every later submit that waits on or signals a failed point (Schedule
//     returns the error, after failing what that submit would have
//     signalled);
//   - host waits for a failed point (Timeline.Wait, WaitAll), which return
//     the error instead of waiting for their context, and host signals of
//     a failed timeline.
//
// Refusals at the call (ErrInvalid, ErrBusy, ErrClosed from Schedule) are
// not failures: nothing was accepted, nothing is marked, and the caller may
// submit again.

// ErrFailed matches every *FailedError: the work depended on a timeline
// point whose producer failed.
var ErrFailed = errors.New("vkflow: a timeline point it depends on failed")

// FailedError reports that a timeline point will never be reached because
// the work that was to signal it failed. Cause is the root failure (a
// Vulkan error, ErrClosed for a closed timeline, ...); errors.Is matches
// both ErrFailed and Cause.
type FailedError struct {
	// Value is the first failed value of the timeline that failed first.
	Value uint64
	// What names the root failure ("vkQueueSubmit of logical queue 1",
	// "timeline closed").
	What  string
	Cause error
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("vkflow: timeline point %d failed (%s): %v", e.Value, e.What, e.Cause)
}

// Unwrap returns the root cause.
func (e *FailedError) Unwrap() error { return e.Cause }

// Is makes a FailedError match ErrFailed.
func (e *FailedError) Is(target error) bool { return target == ErrFailed }

// failure is a timeline's failed state: values from from on are failed,
// up to to on a recoverable timeline (0: no bound, sticky).
type failure struct {
	from, to uint64
	err      *FailedError
}

// covers reports whether value v is failed.
func (f *failure) covers(v uint64) bool { return v >= f.from && (f.to == 0 || v <= f.to) }

// Failed returns the failure of value v of t, or nil: t is failed from a
// value at or below v. Safe without the scheduler lock.
func (t *Timeline) Failed(v uint64) error {
	f := t.fail.Load()
	if f == nil || !f.covers(v) {
		return nil
	}
	return f.err
}

// SetRecoverable makes t's failures bounded instead of sticky: a failure
// covers the values accepted submits signal when it happens, and later
// signals are accepted; once one of them is promised, the timeline is
// healthy again (its counter will pass the failed values). A graph Exec's
// own timelines are recoverable, so that a failed run does not fail every
// later run. Call before t is used.
func (t *Timeline) SetRecoverable() {
	t.dev.sched.mu.Lock()
	t.recoverable = true
	t.dev.sched.mu.Unlock()
}

// asFailed returns err as the *FailedError that travels downstream: err
// itself when it already is one, else a new one rooted at (v, what).
func asFailed(err error, v uint64, what string) *FailedError {
	var fe *FailedError
	if errors.As(err, &fe) {
		return fe
	}
	return &FailedError{Value: v, What: what, Cause: err}
}

// failTimeline marks t failed from v (at least one past what was promised:
// a promised value will be reached) and fails the held submits that can
// no longer complete: waits at or past the failed value, and signals of t
// at or past it. Failed submits are appended to *dead. Called with the
// scheduler lock held.
func (sc *scheduler) failTimeline(t *Timeline, v uint64, err *FailedError, dead *[]*Submission) {
	if !PropagateFailures {
		return
	}
	v = max(v, t.promised+1)
	if f := t.fail.Load(); f != nil && f.covers(v) && f.from <= v {
		return
	}
	var to uint64
	if t.recoverable {
		to = max(t.reserved, v)
	}
	t.fail.Store(&failure{from: v, to: to, err: err})
	// Held signallers of t at or past v come after every one below it
	// (values increase in acceptance order): cut the queue there.
	for i := t.head; i < len(t.signallers); i++ {
		s := t.signallers[i]
		if s == nil || signalValue(s, t) < v {
			continue
		}
		cut := t.signallers[i:]
		failing := append([]*Submission(nil), cut...)
		clear(cut)
		t.signallers = t.signallers[:i]
		t.compact()
		for _, s := range failing {
			sc.failSubmit(s, err, dead)
		}
		break
	}
	// Held waits at or past v.
	var failing []*Submission
	keep := t.waiters[:0]
	for _, w := range t.waiters {
		switch {
		case w.s.dead:
		case w.value >= v:
			failing = append(failing, w.s)
		default:
			keep = append(keep, w)
		}
	}
	clear(t.waiters[len(keep):])
	t.waiters = minheap.Heapify(keep, lower)
	for _, s := range failing {
		sc.failSubmit(s, err, dead)
	}
	// The GPU owes t what was submitted (promised) and what the remaining
	// held signallers, all below v, signal.
	t.gpu = t.promised
	if t.head < len(t.signallers) {
		t.gpu = max(t.gpu, signalValue(t.signallers[len(t.signallers)-1], t))
	}
}

// failSubmit fails held submit s with err and fails what it would have
// signalled. Called with the scheduler lock held.
func (sc *scheduler) failSubmit(s *Submission, err *FailedError, dead *[]*Submission) {
	if s.dead {
		return
	}
	s.dead = true
	s.err = err
	sc.unlink(s)
	sc.removeReady(s)
	*dead = append(*dead, s)
	for i, p := range s.Signals {
		if !firstOf(s.Signals, i) {
			continue
		}
		t := p.TL
		// s may sit in t's queue of held signallers (not when it was cut
		// from it already): take it out. The signallers after it signal
		// higher values, so failTimeline below fails them too; none is
		// left blocked behind s.
		for k := t.head; k < len(t.signallers); k++ {
			if t.signallers[k] != s {
				continue
			}
			copy(t.signallers[k:], t.signallers[k+1:])
			t.signallers[len(t.signallers)-1] = nil
			t.signallers = t.signallers[:len(t.signallers)-1]
			break
		}
		sc.failTimeline(t, p.Value, err, dead)
	}
}

// removeReady takes s out of the ready heap, if it is there.
func (sc *scheduler) removeReady(s *Submission) {
	for i, r := range sc.ready {
		if r == s {
			last := len(sc.ready) - 1
			sc.ready[i] = sc.ready[last]
			sc.ready[last] = nil
			sc.ready = minheap.Heapify(sc.ready[:last], earlier)
			return
		}
	}
}

// signalValue returns the highest value s signals on t.
func signalValue(s *Submission, t *Timeline) uint64 {
	var v uint64
	for _, p := range s.Signals {
		if p.TL == t {
			v = max(v, p.Value)
		}
	}
	return v
}

// failedWait returns the failure of the first of s's waits (or signals:
// a failed timeline takes no new signal) that is failed, or nil. Called
// with the scheduler lock held.
func (s *Submission) failedWait() *FailedError {
	if !PropagateFailures {
		return nil
	}
	for _, w := range s.Waits {
		if f := w.TL.fail.Load(); f != nil && f.covers(w.Value) {
			return f.err
		}
	}
	for _, p := range s.Signals {
		if f := p.TL.fail.Load(); f != nil && (f.to == 0 || p.Value <= f.to) {
			return f.err
		}
	}
	return nil
}

// CloseTimeline fails every value of t past what accepted submits signal:
// once t is closed no submit or host signal can reach them, so their
// held waiters fail now (with ErrClosed) instead of waiting until
// Manager.Close.
func (d *Device) CloseTimeline(t *Timeline) {
	sc := &d.sched
	sc.mu.Lock()
	v := max(t.reserved, t.promised) + 1
	var dead []*Submission
	sc.failTimeline(t, v, &FailedError{Value: v, What: "timeline closed", Cause: Closed("timeline")}, &dead)
	ready := sc.drain(d)
	sc.mu.Unlock()
	finish(dead)
	finish(ready)
}

// WaitTimeline waits until t reaches v, like WaitSemaphore, but returns
// t's failure as soon as v is failed (checked before each bounded slice
// of the wait, so within waitSlice of the failure) instead of waiting for
// ctx. It allocates nothing.
func (d *Device) WaitTimeline(ctx context.Context, t *Timeline, v uint64) error {
	w := waitState{first: true}
	if tr := d.tracer; tr != nil {
		defer tr.wait(tr.now(), &w, v)
	}
	return d.waitSlices(ctx, true,
		func() error { return pointFailed(d, t, v) },
		func(timeout uint64) error { return d.waitSlice(t.Sem, v, &w, timeout) })
}

// WaitTimelines waits until every (or, with any, one) t[i] reaches v[i],
// in bounded slices like WaitTimeline. A failed point ends the wait with
// its error: for all, the first failed point; for any, once every point
// is failed.
func (d *Device) WaitTimelines(ctx context.Context, ts []*Timeline, vs []uint64, any bool) error {
	sems := make([]vk.Semaphore, 0, len(ts))
	for _, t := range ts {
		sems = append(sems, t.Sem)
	}
	return d.waitSlices(ctx, true,
		func() error { return failedPoints(d, ts, vs, any) },
		func(timeout uint64) error { return d.VK.WaitSemaphores(sems, vs, any, timeout) })
}

// pointFailed returns t's failure if v is failed and the semaphore has
// not reached v anyway (a shared timeline signalled from outside), else
// nil. Called inside the gate.
func pointFailed(d *Device, t *Timeline, v uint64) error {
	err := t.Failed(v)
	if err == nil {
		return nil
	}
	if cur, verr := d.VK.SemaphoreValue(t.Sem); verr == nil && cur >= v {
		return nil
	}
	return err
}

// failedPoints returns the failure that ends a wait for ts at vs, or nil.
// Called inside the gate.
func failedPoints(d *Device, ts []*Timeline, vs []uint64, any bool) error {
	var first error
	failed := 0
	for i, t := range ts {
		err := pointFailed(d, t, vs[i])
		if err == nil {
			continue
		}
		failed++
		if first == nil {
			first = err
		}
		if !any {
			return first
		}
	}
	if any && failed == len(ts) {
		return first
	}
	return nil
}

package opcore

import (
	"time"

	"github.com/vkflow/vkflow/internal/core"
)

// An idle stream gives back what its calls held (the sequences of
// completed calls, and through them tensors the program closed) without a
// host call of the program's. A completion hook per call (core.WhenComplete)
// would do it, at the price of waking the completion watcher's thread for
// every call: on a synchronous loop (call, wait, read) that is three more
// thread switches per op, a tenth of its time on lavapipe. Instead a call
// starts the idle timer unless it runs already; when it fires, idleDelay
// after, the stream reclaims what completed and, with calls still on the
// GPU, arms one completion hook for the newest (WhenComplete), whose run
// reclaims and starts the timer again for calls queued meanwhile. A busy
// stream reclaims at its calls anyway (after each submit); the timer
// costs it one wake per idleDelay at most. A firing that finds nothing in
// flight and no call since the timer started drops the op recordings
// (stream_rec.go), which may pin buffers of closed tensors; one that finds
// calls since looks again a period later.

// idleDelay is how long after a call the stream looks at its ring again.
// It was 1 ms: on a synchronous loop (call, wait, read, about 80 µs an
// iteration on lavapipe) the timer then fired every dozen calls, and each
// firing woke Go runtime threads and the completion watcher, which took
// CPU from the driver's threads: 3 µs an iteration more than at 10 ms
// (docs/BENCHMARKS.md, "Host waits that poll").
const idleDelay = 10 * time.Millisecond

// idleTimer is the stream's timer; its Stream's mu guards it.
type idleTimer struct {
	t    *time.Timer
	set  bool   // t will fire
	mark uint64 // Stream.submits when it started
}

// schedule starts the idle timer unless it runs already or a completion
// hook is armed (its run schedules again). Called with mu held.
func (s *Stream) schedule() {
	if s.armed || s.idle.set || len(s.ring) == 0 {
		return
	}
	s.startIdle()
}

// startIdle starts the idle timer and notes the calls submitted so far.
// Called with mu held.
func (s *Stream) startIdle() {
	if s.idle.t == nil {
		s.idle.t = time.AfterFunc(idleDelay, s.idleFired)
	} else {
		s.idle.t.Reset(idleDelay)
	}
	s.idle.set = true
	s.idle.mark = s.submits
}

// idleFired runs on the timer's goroutine: it reclaims what completed and
// arms a completion hook for the calls still on the GPU. It enters the
// device's gate, so that it does nothing once the Manager is closing.
func (s *Stream) idleFired() {
	d, err := core.Enter(s.owner)
	if err != nil {
		return // the Manager is closing: it frees everything itself
	}
	defer d.Exit()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle.set = false
	if s.closed {
		return
	}
	s.reclaim()
	if len(s.ring) == 0 {
		if s.submits == s.idle.mark {
			// No call for a whole idle period: the buffers the op
			// recordings pin come back (stream_rec.go).
			s.dropRecordings()
		} else {
			// Calls came meanwhile: look again one period later, so
			// that a stream that goes quiet drops its recordings, and a
			// busy one keeps them.
			s.startIdle()
		}
	}
	s.arm()
}

// stop stops the timer (Close). Called with mu held.
func (it *idleTimer) stop() {
	if it.t != nil {
		it.t.Stop()
	}
	it.set = false
}

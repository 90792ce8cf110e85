package core

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vkflow/vkflow/vk"
)

// waitSlice bounds each blocking vkWaitSemaphores call, so that a wait
// notices context cancellation within this time.
const waitSlice = 50 * time.Millisecond

// Queue is one physical VkQueue and the timeline semaphore that counts its
// submissions: submission n signals value n.
//
// Submit is safe for concurrent use; the queue lock covers taking the next
// value and vkQueueSubmit, so values reach the driver in order.
type Queue struct {
	dev    *Device
	Index  int    // position among the device's physical queues
	Family uint32 // queue family index
	InFam  uint32 // index within the family
	handle vk.Queue
	sem    vk.Semaphore

	mu        sync.Mutex
	hazards   map[vk.Buffer]*hazardState // guarded by mu (hazard.go)
	reused    bool                       // a tracked buffer was destroyed; guarded by mu
	submitted atomic.Uint64              // last value handed to the driver
	completed atomic.Uint64              // last value seen completed (a cache)
	// idled is a value the driver was idle at: vkDeviceWaitIdle returned
	// after it was submitted (see Retired).
	idled atomic.Uint64
}

// Submitted returns the last timeline value submitted.
func (q *Queue) Submitted() uint64 { return q.submitted.Load() }

// Lock takes the queue's submission lock, for callers that build a submit
// themselves (SubmitLocked).
func (q *Queue) Lock() { q.mu.Lock() }

// Unlock releases the submission lock.
func (q *Queue) Unlock() { q.mu.Unlock() }

// SubmitLocked submits s, appending the queue's own next timeline value to
// its signals, with the prelude that h's hazards need (h may be nil for an
// untracked submit); the caller holds Lock, is inside the device's gate
// (see Enter) and owns s's scratch slices. It returns the value that will
// signal completion.
func (q *Queue) SubmitLocked(s *vk.Submit, h *Hazards) (uint64, error) {
	if q.dev.closing.Load() {
		return 0, Closed("Manager")
	}
	v := q.submitted.Load() + 1
	pre, err := h.prelude(q, v)
	if err != nil {
		return 0, err
	}
	s.Pre = pre
	s.SignalSems = append(s.SignalSems, q.sem)
	s.SignalValues = append(s.SignalValues, v)
	if err := q.queueSubmit(s, v); err != nil {
		return 0, q.dev.check(err)
	}
	q.submitted.Store(v)
	if h != nil {
		h.commit(q)
	}
	return v, nil
}

// Submit submits cmd (nil for none) and returns the timeline value that
// signals its completion. It allocates nothing.
func (q *Queue) Submit(cmd vk.CommandBuffer) (uint64, error) { return q.SubmitTracked(cmd, nil) }

// SubmitTracked submits cmd, whose buffer uses h describes (nil for an
// untracked submit), after a prelude with the barriers that order it after
// earlier submits on the queue (hazard.go). In steady state it allocates
// nothing.
func (q *Queue) SubmitTracked(cmd vk.CommandBuffer, h *Hazards) (uint64, error) {
	d := q.dev
	if err := d.Enter(); err != nil {
		return 0, err
	}
	defer d.Exit()
	q.mu.Lock()
	v := q.submitted.Load() + 1
	pre, err := h.prelude(q, v)
	if err == nil {
		if d.tracer != nil {
			err = q.queueSubmit(&vk.Submit{Pre: pre, Cmd: cmd, SignalSems: []vk.Semaphore{q.sem}, SignalValues: []uint64{v}}, v)
		} else {
			err = vk.QueueSubmitSignalPre(q.handle, pre, cmd, q.sem, v)
		}
	}
	if err == nil {
		q.submitted.Store(v)
		if h != nil {
			h.commit(q)
		}
	}
	q.mu.Unlock()
	if err != nil {
		return 0, d.check(err)
	}
	d.collect()
	return v, nil
}

// queueSubmit hands s, which signals value v of q's timeline, to the
// driver; with a trace, timestamps go first and last in the batch and a
// host span around vkQueueSubmit. Called with q's lock held.
func (q *Queue) queueSubmit(s *vk.Submit, v uint64) error {
	t := q.dev.tracer
	if t == nil {
		return vk.QueueSubmit(q.handle, s)
	}
	sl := t.beginSubmit(q, s)
	start := t.now()
	err := vk.QueueSubmit(q.handle, s)
	s.Begin, s.End = nil, nil
	t.submitted(q, s, sl, v, start, err)
	return err
}

// Completed returns the last completed timeline value.
func (q *Queue) Completed() uint64 {
	c := q.completed.Load()
	if c >= q.submitted.Load() || !q.dev.enter() {
		return c
	}
	v, err := q.dev.VK.SemaphoreValue(q.sem)
	q.dev.Exit()
	if err != nil {
		q.dev.check(err)
		return c
	}
	q.markCompleted(v)
	return v
}

func (q *Queue) markCompleted(v uint64) {
	for {
		old := q.completed.Load()
		if v <= old || q.completed.CompareAndSwap(old, v) {
			return
		}
	}
}

// Retired returns the last timeline value whose batch the driver has
// finished with entirely, its own bookkeeping included.
//
// A batch's queue value completing says its commands are done, not that
// the driver is done with the batch: the signal operations of one batch
// are unordered among themselves, and lavapipe (Mesa 22.3) releases the
// batch's wait points after it signals, locking the mutex of every
// timeline the batch waited on (a timeline destroyed at that moment
// crashed its submit thread: TestCloseHeldThenRelease). A queue runs its
// batches in order, so once value c has completed, batch c-1 is retired;
// after vkDeviceWaitIdle every batch submitted before it is.
func (q *Queue) Retired() uint64 {
	c := q.Completed()
	if c > 0 {
		c--
	}
	return max(c, q.idled.Load())
}

// Done reports whether value v has completed, without blocking.
func (q *Queue) Done(v uint64) bool { return q.Completed() >= v }

// Wait blocks until value v completes or ctx ends. It waits in bounded
// slices so cancellation and deadlines are honoured, returns ctx.Err() when
// the context ends first, and allocates nothing.
func (q *Queue) Wait(ctx context.Context, v uint64) error { return q.wait(ctx, v, true) }

// wait is Wait; gated enters the device's gate for each slice (false for
// Close itself).
func (q *Queue) wait(ctx context.Context, v uint64, gated bool) error {
	if q.completed.Load() >= v {
		return nil
	}
	if err := q.dev.waitSem(ctx, q.sem, v, gated); err != nil {
		return err
	}
	q.markCompleted(v)
	if gated && q.dev.enter() {
		q.dev.collectSync()
		q.dev.Exit()
	}
	return nil
}

// yieldEvery bounds how long a waiting goroutine goes without passing
// through the Go scheduler. A goroutine that only makes cgo calls (submit,
// wait, submit, ...) never bumps its scheduling tick; after 10ms the
// runtime's sysmon takes it for a runaway and retakes its P at every
// blocking wait, waking idle threads that then compete with the driver's
// own. On lavapipe the yield cut a one-dispatch submit+wait by 4-18%
// (docs/BENCHMARKS.md).
const yieldEvery = int64(5 * time.Millisecond)

var lastYield atomic.Int64

func maybeYield() {
	now := time.Now().UnixNano()
	if last := lastYield.Load(); now-last >= yieldEvery && lastYield.CompareAndSwap(last, now) {
		runtime.Gosched()
	}
}

// nextSlice returns how long the next blocking wait may last: waitSlice, or
// less before ctx's deadline (0 once it has passed: poll once).
func nextSlice(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(0, min(waitSlice, time.Until(dl)))
	}
	return waitSlice
}

// sliceDone decides what a timed-out slice means: the context's error if
// it ended (DeadlineExceeded as soon as a deadline passed, even before its
// timer fires), nil to wait another slice.
func sliceDone(ctx context.Context, slice time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if slice == 0 {
		return context.DeadlineExceeded
	}
	return nil
}

// WaitSemaphore waits until sem reaches v in bounded slices, honouring ctx.
// Each slice enters the device's gate, so a wait ends with ErrClosed soon
// after Close starts. It allocates nothing (WaitSemaphores takes slices,
// which would escape).
func (d *Device) WaitSemaphore(ctx context.Context, sem vk.Semaphore, v uint64) error {
	return d.waitSem(ctx, sem, v, true)
}

// WaitPinned is WaitSemaphore for a caller holding a Pin, which keeps the
// device alive: it goes on working after Close.
func (d *Device) WaitPinned(ctx context.Context, sem vk.Semaphore, v uint64) error {
	return d.waitSem(ctx, sem, v, false)
}

func (d *Device) waitSem(ctx context.Context, sem vk.Semaphore, v uint64, gated bool) error {
	w := waitState{first: true}
	if t := d.tracer; t != nil {
		defer t.wait(t.now(), &w, v)
	}
	return d.waitSlices(ctx, gated, nil, func(timeout uint64) error { return d.waitSlice(sem, v, &w, timeout) })
}

// waitSlices calls wait (a vkWaitSemaphores with the given timeout in ns)
// in bounded slices until it succeeds or fails, ctx ends, or failed
// (nil for none; checked before each slice, inside the gate) returns an
// error; gated enters the gate for each slice. It allocates nothing.
func (d *Device) waitSlices(ctx context.Context, gated bool, failed func() error, wait func(timeout uint64) error) error {
	maybeYield()
	for {
		if gated {
			if err := d.Enter(); err != nil {
				return err
			}
		}
		var err error
		if failed != nil {
			err = failed()
		}
		slice := nextSlice(ctx)
		if err == nil {
			err = wait(uint64(slice))
		}
		if gated {
			d.Exit()
		}
		if err == nil || !isTimeout(err) {
			return d.check(err)
		}
		if err := sliceDone(ctx, slice); err != nil {
			return err
		}
	}
}

// SemaphoreValue returns sem's current value, inside the gate.
func (d *Device) SemaphoreValue(sem vk.Semaphore) (uint64, error) {
	if err := d.Enter(); err != nil {
		return 0, err
	}
	defer d.Exit()
	v, err := d.VK.SemaphoreValue(sem)
	return v, d.check(err)
}

func isTimeout(err error) bool {
	e, ok := err.(*vk.Error)
	return ok && e.Result == vk.Timeout
}

// QueueInfo describes a logical queue and where it runs.
type QueueInfo struct {
	Logical  int
	Physical int
	Family   uint32
	Index    uint32 // index within the family
	Transfer bool   // requested as the transfer queue
}

func (i QueueInfo) String() string {
	kind := "compute"
	if i.Transfer {
		kind = "transfer"
	}
	return fmt.Sprintf("logical %d (%s) -> family %d queue %d", i.Logical, kind, i.Family, i.Index)
}

// VK returns the VkQueue, for the submit-path experiment in package
// sequence (submitpath_internal_test.go), which submits to it directly.
func (q *Queue) VK() vk.Queue { return q.handle }

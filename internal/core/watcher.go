package core

import (
	"context"
	"sync/atomic"
	"time"
)

// The completion watcher frees deferred objects (deferDestroy) as soon as
// the GPU is done with them, without waiting for a later call of the
// program's to run collect: an idle Manager gives memory back on its own,
// and with it the memfds behind exportable memory.
//
// It is one goroutine per physical queue (one on lavapipe), started by
// Open and joined by Close. A queue's goroutine parks in vkWaitSemaphores
// on that queue's timeline alone, at the smallest value that makes one of
// the deferred objects idle there (its last use; for a timeline semaphore
// the value after it, see Queue.Retired), or, with nothing to wait for on
// its queue, on a Go channel that deferDestroy kicks. So it wakes only
// when something may have become free: nothing is polled, and submits and
// waits pay nothing for it. Each wait is bounded by watchSafety, a safety
// net, not the mechanism.
//
// Why not one goroutine parked in one wait-any on every queue timeline
// plus a private wake timeline: the validation layer this project tests
// under (1.3.239) treats a wait-any like a wait-all once the call returns,
// waiting 10 s for each timeline that did not reach its value and then
// reporting UNASSIGNED-VkSemaphore-state-timeout. Waits on one timeline
// each avoid that, and need no host signal to wake.
//
// The cost of a wait that cannot be interrupted: an object deferred with a
// use older than the value its queue's goroutine already waits for is
// freed when that value completes, not at its own.
//
// Gate: the collection of each round (collect, then choosing the next
// value) runs inside the gate, like any call. The wait itself does not:
// it would hold Close's drain until the GPU got there. It touches only the
// queue's timeline, which lives until the device is destroyed, and Close
// joins the goroutines once the GPU has completed every submitted value
// (every value they wait for is one), before destroying anything. After
// device loss they stop: nothing can be freed until Close idles the
// device. When Close finds the GPU stuck it destroys nothing, and returns
// without joining; the goroutines see Close within watchSafety.
//
// Held submits: the scheduler holds a submit only until a host-side event
// promises what it waits for (a signal handed to the driver, or a host
// signal), and that event releases it at once; waits on shared timelines
// are never held. No held submit becomes releasable by GPU progress alone,
// so the watcher has none to release.
//
// Its waits use vk.Device.WatchSemaphore, which fault injection does not
// count, so the calls a test step makes stay deterministic.

// watchSafety bounds each wait of the watcher.
const watchSafety = 5 * time.Second

// watcher is the completion watcher's state, embedded in Device.
type watcher struct {
	queues []*queueWatch // per physical queue; nil before Open starts them
	// closing is cancelled, with cause ErrClosed, when Close starts: it
	// stops the goroutines, and ends waits made with Device.Closing.
	closing context.Context
	cancel  context.CancelCauseFunc
	stop    <-chan struct{} // closing.Done()
	rounds  atomic.Uint64   // rounds run, all queues together (for tests)
}

// queueWatch is the goroutine of one physical queue.
type queueWatch struct {
	q *Queue
	// target is the value of the queue's timeline the goroutine waits
	// for, 0 while it waits for a kick. Written under the device's gcMu,
	// so that deferDestroy, which appends under it, reads a target that
	// covers the list it appended to (notify).
	target atomic.Uint64
	kick   chan struct{} // buffered 1: something new to watch
	done   chan struct{} // closed when the goroutine returns
	comp   []uint64      // scratch: each queue's completed value
	// hooks run once the queue's timeline reaches their value
	// (WhenComplete); guarded by the device's gcMu.
	hooks []hook
	due   []hook // scratch of run, outside gcMu
}

// hook is a function to run once a queue value completes.
type hook struct {
	v  uint64
	fn func()
}

// WhenComplete runs fn on the completion watcher's goroutine once value v
// of queue q's timeline has completed (at once, on that goroutine, if it
// has already), so that what a completed submit held can be released
// without a host call of the program's: an eager stream reclaims its
// in-flight sequences this way. fn runs outside the gate and must not
// block on the GPU. It reports false, running nothing, when there is no
// watcher (Close has started): the caller then releases at its next call
// as before.
func (d *Device) WhenComplete(q *Queue, v uint64, fn func()) bool {
	w := &d.watch
	if w.queues == nil || d.closed.Load() {
		return false
	}
	qw := w.queues[q.Index]
	d.gcMu.Lock()
	qw.hooks = append(qw.hooks, hook{v, fn})
	t := qw.target.Load()
	d.gcMu.Unlock()
	if t == 0 || t > v {
		qw.poke()
	}
	return true
}

// takeDue moves the hooks whose value has completed to qw.due.
func (qw *queueWatch) takeDue(d *Device) {
	done := qw.q.Completed()
	d.gcMu.Lock()
	keep := qw.hooks[:0]
	for _, h := range qw.hooks {
		if h.v <= done {
			qw.due = append(qw.due, h)
		} else {
			keep = append(keep, h)
		}
	}
	clear(qw.hooks[len(keep):])
	qw.hooks = keep
	d.gcMu.Unlock()
}

// startWatcher starts one goroutine per physical queue. Open calls it
// last.
func (d *Device) startWatcher() {
	w := &d.watch
	w.closing, w.cancel = context.WithCancelCause(context.Background())
	w.stop = w.closing.Done()
	for _, q := range d.queues {
		qw := &queueWatch{q: q, kick: make(chan struct{}, 1), done: make(chan struct{}), comp: make([]uint64, len(d.queues))}
		w.queues = append(w.queues, qw)
		go qw.run(d, w)
	}
}

// stopWatcher tells the goroutines to return. Close calls it after
// setting closed.
func (d *Device) stopWatcher() {
	if d.watch.cancel != nil {
		d.watch.cancel(Closed("Manager"))
	}
}

// Closing returns a context cancelled, with cause ErrClosed, when Close
// starts. A call that waits inside the gate by other means than Vulkan
// waits that enter it per slice (a channel: a held submit's release)
// derives its context from it, so that its wait ends when Close starts
// instead of holding Close's drain until the wait's own deadline; the
// held submit would not be dropped before that drain.
func (d *Device) Closing() context.Context {
	if d.watch.closing == nil {
		return context.Background()
	}
	return d.watch.closing
}

// joinWatcher waits until every goroutine has returned. Close calls it
// once the GPU has completed every submitted value, before destroying
// anything.
func (d *Device) joinWatcher() {
	for _, qw := range d.watch.queues {
		<-qw.done
	}
}

// WatcherRounds returns how many rounds the completion watcher has run
// (one per wake-up, all queues together), for tests: an idle device adds
// one per watchSafety at most.
func (d *Device) WatcherRounds() uint64 { return d.watch.rounds.Load() }

// run is one queue's goroutine.
func (qw *queueWatch) run(d *Device, w *watcher) {
	defer close(qw.done)
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		if !d.enter() {
			return
		}
		if d.lost.Load() {
			d.Exit()
			return
		}
		d.collect()
		qw.takeDue(d)
		t, again := qw.arm(d)
		d.Exit()
		for i, h := range qw.due {
			h.fn()
			qw.due[i] = hook{}
		}
		qw.due = qw.due[:0]
		w.rounds.Add(1)
		switch {
		case again:
			continue
		case t == 0:
			select {
			case <-qw.kick:
				continue
			case <-w.stop:
				return
			}
		}
		err := d.VK.WatchSemaphore(qw.q.sem, t, uint64(watchSafety))
		if err == nil || isTimeout(err) {
			continue
		}
		if d.check(err); d.lost.Load() {
			return
		}
		d.Log.Debug("vkflow: completion watcher: wait failed; retrying", "queue", qw.q.Index, "err", err)
		select {
		case <-w.stop:
			return
		case <-time.After(watchSafety):
		}
	}
}

// arm chooses the value to wait for: the smallest value of the queue's
// timeline that makes a deferred object idle there, at most the last one
// submitted (a later one needs a submit, whose deferDestroy kicks), or 0
// for none. It reports whether an object is idle already, so that the
// goroutine collects again instead of waiting. Called inside the gate.
func (qw *queueWatch) arm(d *Device) (t uint64, again bool) {
	for i, q := range d.queues {
		qw.comp[i] = q.Completed()
	}
	i := qw.q.Index
	top := qw.q.Submitted()
	d.gcMu.Lock()
	for _, o := range d.garbage {
		if n := o.need(i, qw.comp[i]); n != 0 && n <= top && (t == 0 || n < t) {
			t = n
		}
		if !again && o.ready(qw.comp) {
			again = true
		}
	}
	for _, h := range qw.hooks {
		switch {
		case h.v <= qw.comp[i]:
			again = true
		case h.v <= top && (t == 0 || h.v < t):
			t = h.v
		}
	}
	qw.target.Store(t)
	d.gcMu.Unlock()
	return t, again
}

// notify makes sure goroutines will wake for o, which deferDestroy has
// just appended to the deferred list: on each queue where o still has a
// use to wait for, that queue's goroutine already waits for a value at or
// below it (it will see o when it wakes), or it is kicked. o is idle once
// its last such use completes, and the queue of that use collects it.
// When o is idle already, queue 0's goroutine is kicked to collect it.
// Called inside the gate.
func (w *watcher) notify(d *Device, o *Object) {
	if w.queues == nil {
		return
	}
	pending := false
	for i, qw := range w.queues {
		n := o.need(i, qw.q.completed.Load())
		if n == 0 {
			continue
		}
		pending = true
		if t := qw.target.Load(); t == 0 || t > n {
			qw.poke()
		}
	}
	if !pending {
		w.queues[0].poke()
	}
}

// poke kicks the goroutine, unless a kick is pending already. A goroutine
// parked in its wait sees the kick when the wait ends.
func (qw *queueWatch) poke() {
	select {
	case qw.kick <- struct{}{}:
	default:
	}
}

// need returns the value of physical queue i's timeline from which o's use
// there is over (see idle), or 0 when it is over at done, the queue's
// completed value.
func (o *Object) need(i int, done uint64) uint64 {
	v := o.uses[i].Load()
	if v == 0 {
		return 0
	}
	if o.kind == KindTimeline {
		if o.dev.queues[i].idled.Load() >= v {
			return 0
		}
		v++ // retired once the batch after it completed (Queue.Retired)
	}
	if done >= v {
		return 0
	}
	return v
}

// ready reports whether o is idle at the completed values done.
func (o *Object) ready(done []uint64) bool {
	for i := range o.uses {
		if o.need(i, done[i]) != 0 {
			return false
		}
	}
	return true
}

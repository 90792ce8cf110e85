package core

import (
	"sync"
	"sync/atomic"
)

// Kind orders objects for Manager.Close: lower kinds close first.
type Kind int

// Object kinds, in the order the Manager closes them.
const (
	KindSequence Kind = iota
	KindAlgorithm
	KindTensor
	KindTimeline
	numKinds
)

// Object is the lifetime core of everything a Manager creates.
//
// Ownership: the creator holds one reference; every sequence that records
// the object holds another until it is cleared or closed. When the last
// reference goes, the destroy function runs once the GPU has passed every
// timeline value recorded by MarkUse; until then the object waits in the
// device's deferred list. Close drops the creator's reference exactly once.
type Object struct {
	dev    *Device
	kind   Kind
	refs   atomic.Int64
	closed atomic.Bool
	dead   atomic.Bool     // the last reference went: destroy is scheduled
	uses   []atomic.Uint64 // per physical queue: last timeline value using it
	// failed holds the error of the last submit using o that failed,
	// until a later one succeeds (Fail, MarkUse); shared like uses.
	failed  *atomic.Pointer[failedUse]
	destroy func()
	onClose func()
	regID   uint64
}

// Init registers o with d and takes the creator's reference. destroy frees
// the Vulkan objects; onClose (may be nil) runs once when the object is
// closed, by its Close or by Manager.Close, before the creator's reference
// goes. It fails with ErrClosed once the device is closing. The caller is
// inside the device's gate (see Enter), so that Close cannot destroy the
// device between creating the Vulkan objects and registering them.
func (o *Object) Init(d *Device, kind Kind, destroy func(), onClose func()) error {
	o.dev = d
	o.kind = kind
	o.destroy = destroy
	o.onClose = onClose
	o.uses = make([]atomic.Uint64, len(d.queues))
	o.failed = new(atomic.Pointer[failedUse])
	o.refs.Store(1)
	id, err := d.register(kind, o)
	if err != nil {
		return err
	}
	o.regID = id
	return nil
}

// Device returns the device the object belongs to.
func (o *Object) Device() *Device { return o.dev }

// Closed reports whether Close was called, or the device is closed.
func (o *Object) Closed() bool { return o.closed.Load() || o.dev.closed.Load() }

// Acquire takes a reference for a sequence that records the object.
func (o *Object) Acquire() { o.refs.Add(1) }

// TryAcquire takes a reference unless the object is closed or already
// destroyed; it reports whether it did. Host accessors hold one for their
// duration, so destroy never runs while they read the object.
func (o *Object) TryAcquire() bool {
	if o.Closed() {
		return false
	}
	for {
		n := o.refs.Load()
		if n <= 0 {
			return false
		}
		if o.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference; the last one schedules destruction, once: a
// reference taken after that (Acquire racing Close, whose holder then sees
// Closed) does not destroy the object again when it is dropped.
func (o *Object) Release() {
	if o.refs.Add(-1) == 0 && o.dead.CompareAndSwap(false, true) {
		o.dev.deferDestroy(o)
	}
}

// MarkUse records that timeline value v of physical queue q uses o.
// It allocates nothing.
func (o *Object) MarkUse(q int, v uint64) {
	if f := o.failed; f != nil && f.Load() != nil {
		f.Store(nil) // a later use reached the driver
	}
	u := &o.uses[q]
	for {
		old := u.Load()
		if v <= old || u.CompareAndSwap(old, v) {
			return
		}
	}
}

// TrackUses makes o record its uses in a's buffer-wide record, shared by
// every tensor over a's buffer (a view made by Prefix, or one a dlpack
// import linked with ShareUses): a use marked through one handle is then
// the last use of every handle, so WaitUses, UsesElsewhere and the
// deferred destruction follow the memory, not the handle. The first
// tensor over a buffer gives it its record. Call it right after Init,
// before o is shared.
func (o *Object) TrackUses(a *Allocation) {
	if a.uses == nil {
		a.uses, a.failed = o.uses, o.failed
		return
	}
	o.uses = a.uses
	if a.failed == nil {
		a.failed = o.failed
	}
	o.failed = a.failed
}

// failedUse boxes the error of a failed use.
type failedUse struct{ err error }

// Fail records that a submit using o failed with err and never ran: until
// a later use reaches the driver, Failure returns err, so a host wait for
// o's work (Tensor.Wait) reports the failure instead of returning as if
// the work were done.
func (o *Object) Fail(err error) {
	if err != nil && o.failed != nil {
		o.failed.Store(&failedUse{err})
	}
}

// Failure returns the error Fail recorded, or nil.
func (o *Object) Failure() error {
	if o.failed == nil {
		return nil
	}
	if f := o.failed.Load(); f != nil {
		return f.err
	}
	return nil
}

// LastUse returns the last timeline value of physical queue q that uses o.
func (o *Object) LastUse(q int) uint64 { return o.uses[q].Load() }

// Close drops the creator's reference. It reports whether this call closed
// the object (false when it was already closed, or when Manager.Close has
// started: Manager.Close closes every object itself).
func (o *Object) Close() bool {
	if !o.dev.enter() {
		return false
	}
	defer o.dev.Exit()
	return o.close()
}

func (o *Object) close() bool {
	if !o.closed.CompareAndSwap(false, true) {
		return false
	}
	if o.onClose != nil {
		o.onClose()
	}
	o.dev.unregister(o.kind, o.regID)
	o.Release()
	return true
}

// idle reports whether the GPU has passed every recorded use. A timeline
// semaphore must also be retired (Queue.Retired): the driver may still
// touch a semaphore a completed batch waited on or signalled.
func (o *Object) idle() bool {
	for i := range o.uses {
		v := o.uses[i].Load()
		if v == 0 {
			continue
		}
		q := o.dev.queues[i]
		if o.kind == KindTimeline {
			if q.Retired() < v {
				return false
			}
		} else if q.Completed() < v {
			return false
		}
	}
	return true
}

// retire makes sure every queue whose batches o still waits to retire
// gets a later batch: an empty submit behind o's last use, so that o
// becomes idle without waiting for the program's next submit there. The
// caller is inside the gate.
func (o *Object) retire() {
	if o.kind != KindTimeline {
		return
	}
	for i := range o.uses {
		q := o.dev.queues[i]
		if v := o.uses[i].Load(); v != 0 && v >= q.Submitted() {
			if _, err := q.Submit(nil); err != nil {
				o.dev.Log.Debug("vkflow: retiring a timeline's last batch", "queue", i, "err", err)
			}
		}
	}
}

// registry tracks live objects by kind for Manager.Close.
type registry struct {
	mu      sync.Mutex
	closing bool
	next    uint64
	objs    [numKinds]map[uint64]*Object
}

func (d *Device) register(kind Kind, o *Object) (uint64, error) {
	r := &d.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing || d.closed.Load() {
		return 0, Closed("Manager")
	}
	r.next++
	if r.objs[kind] == nil {
		r.objs[kind] = make(map[uint64]*Object)
	}
	r.objs[kind][r.next] = o
	return r.next, nil
}

func (d *Device) unregister(kind Kind, id uint64) {
	r := &d.reg
	r.mu.Lock()
	delete(r.objs[kind], id)
	r.mu.Unlock()
}

// closeObjects closes every registered object, kind by kind in order.
// Close calls it after draining the gate, so no other call closes objects
// meanwhile.
func (d *Device) closeObjects() {
	r := &d.reg
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	for k := Kind(0); k < numKinds; k++ {
		r.mu.Lock()
		objs := make([]*Object, 0, len(r.objs[k]))
		for _, o := range r.objs[k] {
			objs = append(objs, o)
		}
		r.mu.Unlock()
		for _, o := range objs {
			o.close()
		}
	}
}

// Live returns how many objects of each kind are registered.
func (d *Device) Live() [numKinds]int {
	r := &d.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	var n [numKinds]int
	for k := range r.objs {
		n[k] = len(r.objs[k])
	}
	return n
}

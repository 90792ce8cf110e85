package timeline

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/vk"
)

// Owner is what New takes: a *vkflow.Manager.
type Owner = core.Owner

// Timeline is a timeline semaphore. It is safe for concurrent use.
type Timeline struct {
	obj core.Object
	dev *core.Device
	sem vk.Semaphore
	st  *core.Timeline // the scheduler's state: promised and reserved values
}

// Option configures New.
type Option func(*options)

type options struct {
	exportable bool
}

// Exportable creates the timeline semaphore so that package interop can
// export it as an opaque file descriptor (interop.ExportTimeline), for
// another Manager, process or API (CUDA) to wait on and signal. Such a
// timeline is shared from its creation (see the package documentation).
// Where VK_KHR_external_semaphore_fd is missing, or the driver cannot
// export timeline semaphores as opaque fds (lavapipe), New returns
// ErrUnsupported naming the extension.
func Exportable() Option { return func(o *options) { o.exportable = true } }

// New creates a timeline with an initial value.
func New(o Owner, initial uint64, opts ...Option) (*Timeline, error) {
	d, err := core.Enter(o)
	if err != nil {
		return nil, err
	}
	defer d.Exit()
	var op options
	for _, f := range opts {
		if f != nil {
			f(&op)
		}
	}
	create := d.VK.CreateTimeline
	if op.exportable {
		create = d.CreateExportableTimeline
	}
	sem, err := create(initial)
	if err != nil {
		return nil, err
	}
	t, err := adopt(d, sem, initial)
	if err != nil {
		return nil, err
	}
	if op.exportable {
		t.st.SetExportable()
	}
	return t, nil
}

// Adopt makes a shared timeline over a semaphore imported from another
// process or API, whose value is now value (package interop). The caller
// is inside d's gate; the timeline owns sem, and on error sem is
// destroyed. It is for vkflow's own packages.
func Adopt(d *core.Device, sem vk.Semaphore, value uint64) (*Timeline, error) {
	t, err := adopt(d, sem, value)
	if err != nil {
		return nil, err
	}
	t.st.SetShared()
	return t, nil
}

func adopt(d *core.Device, sem vk.Semaphore, initial uint64) (*Timeline, error) {
	t := &Timeline{dev: d, sem: sem}
	t.st = d.NewTimeline(sem, initial, &t.obj)
	// Once closed, no submit or host signal can reach a value past what
	// accepted submits signal: those values fail, and their held waiters
	// with them (core.CloseTimeline).
	onClose := func() { d.CloseTimeline(t.st) }
	if err := t.obj.Init(d, core.KindTimeline, func() { d.VK.DestroySemaphore(sem) }, onClose); err != nil {
		d.VK.DestroySemaphore(sem)
		return nil, err
	}
	return t, nil
}

// Shared reports whether the timeline is shared with another process or
// API: created Exportable, or imported (interop.ImportTimeline).
func (t *Timeline) Shared() bool { return t != nil && t.st.Shared() }

// hold takes a reference for a host call on the semaphore, so that Close
// meanwhile cannot destroy it under the call, and a pin on the device, so
// that a Manager.Close that finishes before the call does destroys the
// semaphore once the call drops its reference (the last Unpin collects it
// before destroying the device); the caller must call unhold.
func (t *Timeline) hold() error {
	if t == nil {
		return core.Invalid("nil timeline")
	}
	if err := t.dev.Pin(); err != nil {
		return err
	}
	if !t.obj.TryAcquire() {
		t.dev.Unpin()
		return core.Closed("timeline")
	}
	return nil
}

// unhold drops what hold took.
func (t *Timeline) unhold() {
	t.obj.Release()
	t.dev.Unpin()
}

// Value returns the current value.
func (t *Timeline) Value() (uint64, error) {
	if err := t.hold(); err != nil {
		return 0, err
	}
	defer t.unhold()
	return t.dev.SemaphoreValue(t.sem)
}

// Signal sets the value to v from the host and releases submits waiting
// for it. v must be greater than every value signalled before or reserved
// by an accepted submit's signal, and no GPU signal of this timeline may be
// pending (held back or still running); see the package documentation's
// signalling rules. A violation returns an error wrapping ErrInvalid and
// changes nothing.
func (t *Timeline) Signal(v uint64) error {
	if err := t.hold(); err != nil {
		return err
	}
	defer t.unhold()
	return t.dev.HostSignal(t.st, v)
}

// Wait blocks until the value reaches v or ctx ends (returning ctx.Err()).
// If v is failed (see Failures in the package documentation), Wait returns
// the failure, a *FailedError, as soon as it is known instead of waiting
// for ctx.
func (t *Timeline) Wait(ctx context.Context, v uint64) error {
	if err := t.hold(); err != nil {
		return err
	}
	defer t.unhold()
	return t.dev.WaitTimeline(ctx, t.st, v)
}

// Failed returns the failure of value v, a *FailedError, or nil while v
// can still be reached: it is failed once the work that was to signal it
// (or an earlier value of the timeline) failed, or the timeline was
// closed before any accepted submit signalled that far.
func (t *Timeline) Failed(v uint64) error {
	if t == nil {
		return core.Invalid("nil timeline")
	}
	return t.st.Failed(v)
}

// Semaphore returns the VkSemaphore, for vkflow's own packages and for
// consumers that share the VkDevice.
func (t *Timeline) Semaphore() vk.Semaphore { return t.sem }

// Object returns the lifetime object, for vkflow's own packages.
func (t *Timeline) Object() *core.Object { return &t.obj }

// State returns the scheduler's state, for vkflow's own packages.
func (t *Timeline) State() *core.Timeline { return t.st }

// Close releases the timeline once no pending work uses it. Idempotent.
func (t *Timeline) Close() error {
	if t != nil {
		t.obj.Close()
	}
	return nil
}

// FailedError is the error of a failed timeline point and of everything
// that depended on it (package documentation, Failures). errors.Is matches
// vkflow.ErrFailed and the root cause.
type FailedError = core.FailedError

// Point is a value on a timeline.
type Point struct {
	Timeline *Timeline
	Value    uint64
}

func (p Point) String() string { return fmt.Sprintf("timeline %p at %d", p.Timeline, p.Value) }

// check validates points and returns their common device, holding a
// reference on each timeline (see hold); the caller releases them with
// release.
func check(points []Point) (*core.Device, error) {
	if len(points) == 0 {
		return nil, core.Invalid("no timeline points")
	}
	var d *core.Device
	for i, p := range points {
		if err := p.Timeline.hold(); err != nil {
			release(points[:i])
			return nil, fmt.Errorf("point %d: %w", i, err)
		}
		if d == nil {
			d = p.Timeline.dev
		} else if p.Timeline.dev != d {
			release(points[:i+1])
			return nil, core.Invalid("point %d: timeline belongs to another Manager", i)
		}
	}
	return d, nil
}

// release drops the references check took.
func release(points []Point) {
	for _, p := range points {
		p.Timeline.unhold()
	}
}

// WaitAll blocks until every point is reached or ctx ends. A failed point
// ends the wait with its failure.
func WaitAll(ctx context.Context, points ...Point) error {
	_, err := wait(ctx, points, false)
	return err
}

// WaitAny blocks until at least one point is reached or ctx ends, and
// returns the index of a reached point. It returns a failure only once
// every point is failed.
func WaitAny(ctx context.Context, points ...Point) (int, error) {
	return wait(ctx, points, true)
}

func wait(ctx context.Context, points []Point, any bool) (int, error) {
	d, err := check(points)
	if err != nil {
		return -1, err
	}
	defer release(points)
	tls := make([]*core.Timeline, len(points))
	vals := make([]uint64, len(points))
	for i, p := range points {
		tls[i], vals[i] = p.Timeline.st, p.Value
	}
	if err := d.WaitTimelines(ctx, tls, vals, any); err != nil {
		return -1, err
	}
	if !any {
		return 0, nil
	}
	for i, p := range points {
		if v, err := d.SemaphoreValue(p.Timeline.sem); err == nil && v >= p.Value {
			return i, nil
		}
	}
	return -1, fmt.Errorf("timeline: WaitAny: no point reached after the wait returned")
}

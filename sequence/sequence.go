package sequence

import (
	"fmt"
	"sync"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/record"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// Owner is what New takes: a *vkflow.Manager.
type Owner = core.Owner

// Option configures New.
type Option func(*Sequence)

// WithTimestamps writes a GPU timestamp before the first operation and after
// each one; Timestamps returns the per-operation durations.
func WithTimestamps() Option { return func(s *Sequence) { s.timestamps = true } }

// Sequence records operations for one queue. See the package doc.
type Sequence struct {
	obj    core.Object
	dev    *core.Device
	q      *core.Queue
	queue  int
	pool   vk.CommandPool
	cmd    vk.CommandBuffer
	qpool  vk.QueryPool
	nQuery int

	mu         sync.Mutex
	closed     bool // set under mu by Close, before the object is released
	ops        []op
	held       []*core.Object // one reference per tensor and algorithm in ops
	err        error          // sticky recording error
	built      bool
	bindings   []builtBinding // descriptor sets of the current build
	last       uint64         // last submitted timeline value
	inflight   int            // submits held by the scheduler
	firstStage uint32         // stage of the first op: where timeline waits block
	timestamps bool

	// fill patterns for tensors whose size is not a multiple of 4, by
	// word; freed by Clear and destroy
	patterns map[uint32]*core.Allocation

	// scratch reused by every build; keyed by buffer, not allocation: a
	// tensor and a kDLVulkan view of its buffer are one buffer to barriers
	state    map[vk.Buffer]*access
	barriers []vk.BufferBarrier

	// hz orders the command buffer after earlier submits on the queue:
	// build fills hz.Uses (one entry per buffer, indexed by useIdx),
	// and each submit's prelude carries the barriers they need (hazard.go
	// in internal/core).
	hz     *core.Hazards
	useIdx map[vk.Buffer]int

	// detached: the recorded tensors' references are dropped and their
	// buffers pinned, in recording order (detach.go)
	detached bool
	pinned   []*core.Allocation
}

type builtBinding struct {
	algo *algorithm.Algorithm
	set  vk.DescriptorSet
}

// New creates a sequence on logical queue index queue of the Manager.
func New(o Owner, queue int, opts ...Option) (*Sequence, error) {
	d, err := core.Enter(o)
	if err != nil {
		return nil, err
	}
	defer d.Exit()
	q, err := d.Queue(queue)
	if err != nil {
		return nil, err
	}
	s := &Sequence{dev: d, q: q, queue: queue, state: map[vk.Buffer]*access{},
		hz: d.NewHazards(q), useIdx: map[vk.Buffer]int{}}
	for _, f := range opts {
		if f != nil {
			f(s)
		}
	}
	if s.timestamps && d.Info.QueueFamilies[q.Family].TimestampValidBits == 0 {
		return nil, core.Unsupported("queue family %d has no timestamps", q.Family)
	}
	if s.pool, err = d.VK.CreateCommandPool(q.Family, vk.CommandPoolResetBuffer); err != nil {
		return nil, err
	}
	if s.cmd, err = d.VK.AllocateCommandBuffer(s.pool); err != nil {
		d.VK.DestroyCommandPool(s.pool)
		return nil, err
	}
	if err := s.obj.Init(d, core.KindSequence, s.destroy, nil); err != nil {
		d.VK.DestroyCommandPool(s.pool)
		return nil, err
	}
	return s, nil
}

// Queue returns the logical queue index.
func (s *Sequence) Queue() int { return s.queue }

// Err returns the first recording error since the last Clear.
func (s *Sequence) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// record validates and appends one op; a failure sticks. ts are the
// tensors the op uses and a its algorithm (nil for none): record takes a
// reference on each before check runs, so that a Close racing the
// recording cannot free what check reads (a closed one is ErrClosed);
// the op keeps them. A dispatch's tensors come from the algorithm's
// snapshot, which holds references of its own.
func (s *Sequence) record(what string, ts []*tensor.Tensor, a *algorithm.Algorithm, check func() (op, error)) *Sequence {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s
	}
	if s.closed || s.obj.Closed() {
		s.err = core.Closed("sequence")
		return s
	}
	if s.detached {
		s.err = core.Invalid("sequence: %s: detached (Attach or Clear first)", what)
		return s
	}
	objs, err := record.Hold(s.dev, ts, a)
	if err != nil {
		s.err = fmt.Errorf("sequence: %s: %w", what, err)
		return s
	}
	o, err := check()
	if err != nil {
		record.Release(objs)
		s.err = fmt.Errorf("sequence: %w", err)
		return s
	}
	if o.kind == opDispatch {
		for _, t := range o.tensors {
			s.held = append(s.held, t.Object())
		}
	}
	s.held = append(s.held, objs...)
	switch o.kind { // what the GPU will write holds data (graph warnings)
	case opCopy:
		o.tensors[1].Allocation().MarkWritten()
	case opFill:
		o.tensors[0].Allocation().MarkWritten()
	case opDispatch:
		for i, t := range o.tensors {
			if o.algo.Access(i) != algorithm.ReadOnly {
				t.Allocation().MarkWritten()
			}
		}
	}
	s.ops = append(s.ops, o)
	s.built = false
	return s
}

// Clear drops every recorded operation and the references they hold.
func (s *Sequence) Clear() error {
	if err := s.dev.Enter(); err != nil {
		return err
	}
	defer s.dev.Exit()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.obj.Closed() {
		return core.Closed("sequence")
	}
	if s.inflight > 0 || !s.q.Done(s.last) {
		return fmt.Errorf("sequence: Clear: %w (wait for the last submit first)", core.ErrPending)
	}
	s.releaseBuild()
	s.detached = false
	s.unpin() // after the sets stopped naming the buffers
	for _, o := range s.held {
		o.Release()
	}
	clear(s.held)
	s.held = s.held[:0]
	clear(s.ops)
	s.ops = s.ops[:0]
	// No submit is pending, so the GPU is done with the fill patterns.
	for w, a := range s.patterns {
		s.dev.Free(a)
		delete(s.patterns, w)
	}
	s.err = nil
	s.built = false
	return nil
}

// Rerecord refreshes every dispatch with its algorithm's current bindings
// (after algorithm.Bind) and rebuilds the command buffer at the next
// submit. It is all or nothing: when any dispatch's bindings cannot be
// taken (a bound tensor was closed, say) it returns the error and the
// sequence keeps its old bindings.
func (s *Sequence) Rerecord() error {
	if err := s.dev.Enter(); err != nil {
		return err
	}
	defer s.dev.Exit()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.obj.Closed() {
		return core.Closed("sequence")
	}
	if s.inflight > 0 || !s.q.Done(s.last) {
		return fmt.Errorf("sequence: Rerecord: %w (wait for the last submit first)", core.ErrPending)
	}
	if s.detached {
		return core.Invalid("sequence: Rerecord: detached (Attach or Clear first)")
	}
	// All or nothing: take every new snapshot first (each holds references
	// on its tensors); on failure release those and leave the ops as they
	// were, otherwise release the old snapshots and swap.
	type snap struct {
		ts     []*tensor.Tensor
		groups [3]uint32
	}
	snaps := make([]snap, len(s.ops))
	for i := range s.ops {
		o := &s.ops[i]
		if o.kind != opDispatch {
			continue
		}
		ts, groups, err := o.algo.Snapshot()
		if err != nil {
			for _, sn := range snaps[:i] {
				for _, t := range sn.ts {
					t.Object().Release()
				}
			}
			return fmt.Errorf("sequence: Rerecord: dispatch %d: %w", i, err)
		}
		snaps[i] = snap{ts, groups}
	}
	for i := range s.ops {
		o := &s.ops[i]
		if o.kind != opDispatch {
			continue
		}
		for _, t := range o.tensors {
			t.Object().Release()
		}
		o.tensors, o.groups = snaps[i].ts, snaps[i].groups
	}
	s.held = s.held[:0]
	for _, o := range s.ops {
		for _, t := range o.tensors {
			s.held = append(s.held, t.Object())
		}
		if o.algo != nil {
			s.held = append(s.held, o.algo.Object())
		}
	}
	s.built = false
	return nil
}

// releaseBuild returns the current build's descriptor sets and references.
// The caller guarantees no pending submit uses them.
func (s *Sequence) releaseBuild() {
	for _, b := range s.bindings {
		b.algo.ReturnBinding(b.set)
	}
	clear(s.bindings)
	s.bindings = s.bindings[:0]
}

// Close releases the sequence. Its command buffer, descriptor sets and the
// references it holds are freed once the GPU has finished its last submit.
// Idempotent.
func (s *Sequence) Close() error {
	if s == nil {
		return nil
	}
	// Taking the lock first lets a submit in flight mark its timeline value
	// before the last reference can go.
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if !already {
		s.obj.Close()
	}
	return nil
}

func (s *Sequence) destroy() {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Hand the descriptor sets back first (ReturnBinding points them at
	// the device's placeholder buffer), then drop the tensors, then the
	// algorithms: no set back in its pool may name a buffer that can still
	// be destroyed, or the validation layer may see the destruction reach
	// a set another sequence has rewritten and bound meanwhile.
	algos := make(map[*core.Object]int)
	for _, o := range s.ops {
		if o.algo != nil {
			algos[o.algo.Object()]++
		}
	}
	s.releaseBuild()
	s.unpin()
	for _, o := range s.held {
		if algos[o] == 0 {
			o.Release()
		}
	}
	for o, n := range algos {
		for range n {
			o.Release()
		}
	}
	s.held, s.ops = nil, nil
	for _, a := range s.patterns {
		s.dev.Free(a)
	}
	if s.qpool != 0 {
		s.dev.VK.DestroyQueryPool(s.qpool)
	}
	s.hz.Destroy()
	s.dev.VK.DestroyCommandPool(s.pool)
}

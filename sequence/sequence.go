package sequence

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// Owner is what New takes: a *vkflow.Manager.
type Owner = core.Owner

// Pipeline stages and access masks for Barrier (Vulkan synchronization 1).
const (
	StageTop      = vk.StageTopOfPipe
	StageCompute  = vk.StageComputeShader
	StageTransfer = vk.StageTransfer
	StageHost     = vk.StageHost
	StageBottom   = vk.StageBottomOfPipe
	StageAll      = vk.StageAllCommands

	AccessShaderRead    = vk.AccessShaderRead
	AccessShaderWrite   = vk.AccessShaderWrite
	AccessTransferRead  = vk.AccessTransferRead
	AccessTransferWrite = vk.AccessTransferWrite
	AccessHostRead      = vk.AccessHostRead
	AccessHostWrite     = vk.AccessHostWrite
	AccessMemoryRead    = vk.AccessMemoryRead
	AccessMemoryWrite   = vk.AccessMemoryWrite
)

const writeAccess = vk.AccessShaderWrite | vk.AccessTransferWrite | vk.AccessHostWrite | vk.AccessMemoryWrite

// Barrier is an explicit global memory barrier.
type Barrier struct {
	SrcStages, SrcAccess uint32
	DstStages, DstAccess uint32
}

// Region copies Len elements from element Src of the source to element Dst
// of the destination.
type Region struct {
	Src, Dst, Len int
}

// Option configures New.
type Option func(*Sequence)

// WithTimestamps writes a GPU timestamp before the first operation and after
// each one; Timestamps returns the per-operation durations.
func WithTimestamps() Option { return func(s *Sequence) { s.timestamps = true } }

type opKind uint8

const (
	opSyncDevice opKind = iota
	opSyncLocal
	opCopy
	opFill
	opBarrier
	opDispatch
)

var opNames = [...]string{"SyncDevice", "SyncLocal", "Copy", "Fill", "Barrier", "Dispatch"}

type op struct {
	kind    opKind
	tensors []*tensor.Tensor // for a dispatch: the algorithm's bindings when recorded
	groups  [3]uint32
	algo    *algorithm.Algorithm
	push    []byte
	regions []vk.CopyRegion
	fill    uint32
	// fillSize is how many bytes vkCmdFillBuffer writes from offset 0; the
	// rest of the tensor's bytes are copied from fillSrc.
	fillSize uint64
	fillSrc  *core.Allocation
	barrier  Barrier
}

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
	// word; freed in destroy
	patterns map[uint32]*core.Allocation

	// scratch reused by every build
	state    map[*core.Allocation]*access
	barriers []vk.BufferBarrier

	// hz orders the command buffer after earlier submits on the queue:
	// build fills hz.Uses (one entry per allocation, indexed by useIdx),
	// and each submit's prelude carries the barriers they need (hazard.go
	// in internal/core).
	hz     *core.Hazards
	useIdx map[*core.Allocation]int
}

type builtBinding struct {
	algo *algorithm.Algorithm
	set  vk.DescriptorSet
}

type access struct {
	wStage, wAccess     uint32 // last write in this build, 0 if none
	visStage, visAccess uint32 // where that write is already visible
	rStages             uint32 // stages that read since the last write
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
	s := &Sequence{dev: d, q: q, queue: queue, state: map[*core.Allocation]*access{},
		hz: d.NewHazards(q), useIdx: map[*core.Allocation]int{}}
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

// record validates and appends one op; a failure sticks.
func (s *Sequence) record(check func() (op, error)) *Sequence {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s
	}
	if s.closed || s.obj.Closed() {
		s.err = core.Closed("sequence")
		return s
	}
	o, err := check()
	if err != nil {
		s.err = fmt.Errorf("sequence: %w", err)
		return s
	}
	for _, t := range o.tensors {
		if o.kind != opDispatch { // a dispatch's snapshot holds its references
			t.Object().Acquire()
		}
		s.held = append(s.held, t.Object())
	}
	if o.algo != nil {
		o.algo.Object().Acquire()
		s.held = append(s.held, o.algo.Object())
	}
	s.ops = append(s.ops, o)
	s.built = false
	return s
}

func (s *Sequence) checkTensors(what string, ts []*tensor.Tensor) error {
	for i, t := range ts {
		if t == nil {
			return core.Invalid("%s: tensor %d is nil", what, i)
		}
		if t.Closed() {
			return core.Closed(fmt.Sprintf("%s: tensor %d", what, i))
		}
		if t.Object().Device() != s.dev {
			return core.Invalid("%s: tensor %d belongs to another Manager", what, i)
		}
	}
	return nil
}

// SyncDevice declares that the host wrote ts before this submit. Queue
// submission already makes such writes visible to the GPU, so it records no
// command; it checks that the tensors have host access.
func (s *Sequence) SyncDevice(ts ...*tensor.Tensor) *Sequence {
	return s.record(func() (op, error) {
		if err := s.checkTensors("SyncDevice", ts); err != nil {
			return op{}, err
		}
		for i, t := range ts {
			if t.Memory() == tensor.Storage {
				return op{}, core.Invalid("SyncDevice: tensor %d is Storage memory, which the host cannot write", i)
			}
		}
		return op{kind: opSyncDevice, tensors: append([]*tensor.Tensor(nil), ts...)}, nil
	})
}

// SyncLocal makes the GPU's writes to ts visible to the host once the
// submit completes. For memory that is not host-mapped the accessors copy
// through the staging ring and no command is needed.
func (s *Sequence) SyncLocal(ts ...*tensor.Tensor) *Sequence {
	return s.record(func() (op, error) {
		if err := s.checkTensors("SyncLocal", ts); err != nil {
			return op{}, err
		}
		for i, t := range ts {
			if t.Memory() == tensor.Storage {
				return op{}, core.Invalid("SyncLocal: tensor %d is Storage memory, which the host cannot read", i)
			}
		}
		return op{kind: opSyncLocal, tensors: append([]*tensor.Tensor(nil), ts...)}, nil
	})
}

// Copy copies src into dst. With no regions it copies the whole tensor and
// the lengths must match; regions are in elements. The dtypes must match.
// As Vulkan requires, no destination region may overlap a source region or
// another destination region in memory, also when src and dst are views of
// one buffer (ErrInvalid names the two regions).
func (s *Sequence) Copy(src, dst *tensor.Tensor, regions ...Region) *Sequence {
	return s.record(func() (op, error) {
		if err := s.checkTensors("Copy", []*tensor.Tensor{src, dst}); err != nil {
			return op{}, err
		}
		if src.Dtype() != dst.Dtype() {
			return op{}, core.Invalid("Copy: mismatched dtypes %v and %v", src.Dtype(), dst.Dtype())
		}
		if len(regions) == 0 {
			if src.Len() != dst.Len() {
				return op{}, core.Invalid("Copy: size mismatch: %d elements into %d (give regions for a partial copy)", src.Len(), dst.Len())
			}
			regions = []Region{{Len: src.Len()}}
		}
		if dst.ReadOnly() {
			return op{}, core.Invalid("Copy: the destination is read-only")
		}
		es := uint64(src.Dtype().Size())
		rs := make([]vk.CopyRegion, len(regions))
		for i, r := range regions {
			if r.Len <= 0 || r.Src < 0 || r.Dst < 0 || r.Src > src.Len()-r.Len || r.Dst > dst.Len()-r.Len {
				return op{}, core.Invalid("Copy: region %d %+v out of bounds (source %d, destination %d elements)", i, r, src.Len(), dst.Len())
			}
			rs[i] = vk.CopyRegion{SrcOffset: uint64(r.Src) * es, DstOffset: uint64(r.Dst) * es, Size: uint64(r.Len) * es}
		}
		if c, bad := copyConflict(placeOf(src), placeOf(dst), rs); bad {
			other := "destination"
			if c.dstSrc {
				other = "source"
			}
			return op{}, core.Invalid("Copy: region %d's destination overlaps region %d's %s in memory (regions %+v and %+v; Vulkan forbids it)",
				c.I, c.J, other, regions[c.I], regions[c.J])
		}
		return op{kind: opCopy, tensors: []*tensor.Tensor{src, dst}, regions: rs}, nil
	})
}

// Fill sets every element of t to v, whose Go type must match t's dtype
// (tensor.Half for float16). 8-byte values must have equal 32-bit halves
// (zero, for example), because the GPU fills in 32-bit words. It writes
// exactly the tensor's bytes: vkCmdFillBuffer writes whole words, so when
// the size is not a multiple of 4 and the tensor has no padding of its own
// (an import), its last 1-3 bytes are copied from a small host-written
// buffer holding the pattern.
func (s *Sequence) Fill(t *tensor.Tensor, v any) *Sequence {
	return s.record(func() (op, error) {
		if err := s.checkTensors("Fill", []*tensor.Tensor{t}); err != nil {
			return op{}, err
		}
		if t.ReadOnly() {
			return op{}, core.Invalid("Fill: the tensor is read-only")
		}
		word, err := fillWord(t.Dtype(), v)
		if err != nil {
			return op{}, err
		}
		o := op{kind: opFill, tensors: []*tensor.Tensor{t}, fill: word, fillSize: t.Bytes()}
		if padded := (t.Bytes() + 3) &^ 3; t.Allocation().Size >= padded {
			o.fillSize = padded // the padding is the tensor's own
		} else if o.fillSize &^= 3; o.fillSize != t.Bytes() {
			if o.fillSrc, err = s.fillPattern(word); err != nil {
				return op{}, err
			}
		}
		return o, nil
	})
}

// fillPattern returns a host-written buffer holding word, one per distinct
// word, kept until the sequence is destroyed (the GPU only reads it).
// Called with mu held.
func (s *Sequence) fillPattern(word uint32) (*core.Allocation, error) {
	if a := s.patterns[word]; a != nil {
		return a, nil
	}
	a, err := s.dev.Alloc(core.MemHost, 4, vk.BufferUsageTransferSrc)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint32(a.Bytes(), word)
	if err := s.dev.Flush(a); err != nil {
		s.dev.Free(a)
		return nil, err
	}
	if s.patterns == nil {
		s.patterns = map[uint32]*core.Allocation{}
	}
	s.patterns[word] = a
	return a, nil
}

func fillWord(d tensor.Dtype, v any) (uint32, error) {
	var bits uint64
	var got tensor.Dtype
	switch x := v.(type) {
	case tensor.Half:
		bits, got = uint64(x), tensor.Float16
	case float32:
		bits, got = uint64(math.Float32bits(x)), tensor.Float32
	case float64:
		bits, got = math.Float64bits(x), tensor.Float64
	case int8:
		bits, got = uint64(uint8(x)), tensor.Int8
	case int16:
		bits, got = uint64(uint16(x)), tensor.Int16
	case int32:
		bits, got = uint64(uint32(x)), tensor.Int32
	case int64:
		bits, got = uint64(x), tensor.Int64
	case uint8:
		bits, got = uint64(x), tensor.Uint8
	case uint16:
		bits, got = uint64(x), tensor.Uint16
	case uint32:
		bits, got = uint64(x), tensor.Uint32
	case uint64:
		bits, got = x, tensor.Uint64
	case bool:
		if x {
			bits = 1
		}
		got = tensor.Bool
	default:
		return 0, core.Invalid("Fill: unsupported value type %T", v)
	}
	if got != d {
		return 0, core.Invalid("Fill: mismatched dtypes: tensor is %v, value is %v", d, got)
	}
	switch d.Size() {
	case 1:
		return uint32(bits) * 0x01010101, nil
	case 2:
		return uint32(bits) | uint32(bits)<<16, nil
	case 4:
		return uint32(bits), nil
	}
	if uint32(bits) != uint32(bits>>32) {
		return 0, core.Invalid("Fill: %v value %v has unequal 32-bit halves; the GPU fills 32-bit words", d, v)
	}
	return uint32(bits), nil
}

// Barrier records an explicit global memory barrier, in addition to the
// inferred ones.
func (s *Sequence) Barrier(b Barrier) *Sequence {
	return s.record(func() (op, error) {
		if b.SrcStages == 0 || b.DstStages == 0 {
			return op{}, core.Invalid("Barrier: source and destination stages must be non-zero")
		}
		return op{kind: opBarrier, barrier: b}, nil
	})
}

// Dispatch records the algorithm with the tensors bound to it now, and push
// constants given as typed values (see algorithm.Push), whose encoded size
// must equal the shader's push constant block. A later algorithm.Bind does
// not change this dispatch until Rerecord.
func (s *Sequence) Dispatch(a *algorithm.Algorithm, push ...any) *Sequence {
	return s.record(func() (op, error) {
		if a == nil {
			return op{}, core.Invalid("Dispatch: nil algorithm")
		}
		if a.Object().Closed() {
			return op{}, core.Closed("Dispatch: algorithm")
		}
		if a.Object().Device() != s.dev {
			return op{}, core.Invalid("Dispatch: algorithm belongs to another Manager")
		}
		data, err := algorithm.Push(push...)
		if err != nil {
			return op{}, err
		}
		if len(data) != a.PushSize() {
			return op{}, core.Invalid("Dispatch: push constants are %d bytes, the pipeline's are %d", len(data), a.PushSize())
		}
		ts, groups, err := a.Snapshot()
		if err != nil {
			return op{}, err
		}
		for i, t := range ts {
			if t.ReadOnly() && a.Access(i) != algorithm.ReadOnly {
				for _, t := range ts {
					t.Object().Release()
				}
				return op{}, core.Invalid("Dispatch: binding %d writes a read-only tensor", i)
			}
		}
		return op{kind: opDispatch, algo: a, push: data, tensors: ts, groups: groups}, nil
	})
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
	for _, o := range s.held {
		o.Release()
	}
	clear(s.held)
	s.held = s.held[:0]
	clear(s.ops)
	s.ops = s.ops[:0]
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

// Pending is a submitted sequence. It is a small value; copies refer to the
// same submit.
type Pending struct {
	q   *core.Queue
	v   uint64
	err error
	sub *core.Submission // for Submit: may still be held by the scheduler
}

// Wait blocks until the submit completes, ctx ends (returning ctx.Err()),
// or the submit failed (returning its error). A submit still held back
// because what it waits for was never signalled returns ctx.Err() when ctx
// ends. It allocates nothing for EvalAsync's pendings.
func (p Pending) Wait(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	if p.sub != nil {
		if err := p.sub.WaitReleased(ctx); err != nil {
			return err
		}
		v, _ := p.sub.Result()
		return p.q.Wait(ctx, v)
	}
	return p.q.Wait(ctx, p.v)
}

// Done reports without blocking whether the submit completed or failed.
func (p Pending) Done() bool {
	if p.err != nil {
		return true
	}
	if p.sub != nil {
		select {
		case <-p.sub.Released():
			v, err := p.sub.Result()
			return err != nil || p.q.Done(v)
		default:
			return false
		}
	}
	return p.q.Done(p.v)
}

// Err returns the error of the submit itself, if it failed (for a held
// submit, once it was released or dropped).
func (p Pending) Err() error {
	if p.err == nil && p.sub != nil {
		select {
		case <-p.sub.Released():
			_, err := p.sub.Result()
			return err
		default:
		}
	}
	return p.err
}

// Value returns the queue timeline value that signals completion; 0 while
// a submit is still held back.
func (p Pending) Value() uint64 {
	if p.sub != nil {
		select {
		case <-p.sub.Released():
			v, _ := p.sub.Result()
			return v
		default:
			return 0
		}
	}
	return p.v
}

// Eval submits the sequence and waits for it.
func (s *Sequence) Eval(ctx context.Context) error { return s.EvalAsync().Wait(ctx) }

// EvalAsync submits the sequence and returns at once. In steady state
// (already built) it allocates nothing.
func (s *Sequence) EvalAsync() Pending {
	if err := s.dev.Enter(); err != nil {
		return Pending{err: err}
	}
	defer s.dev.Exit()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepare(); err != nil {
		return Pending{err: err}
	}
	v, err := s.q.SubmitTracked(s.submitCmd(), s.hz)
	if err != nil {
		return Pending{err: fmt.Errorf("sequence: %w", err)}
	}
	s.markUses(v)
	return Pending{q: s.q, v: v}
}

// submitCmd returns the command buffer to submit: none for an empty
// sequence, which then only signals. Called with mu held.
func (s *Sequence) submitCmd() vk.CommandBuffer {
	if len(s.ops) > 0 || s.timestamps {
		return s.cmd
	}
	return nil
}

// markUses records that queue value v uses the sequence and everything it
// holds. Called with mu held.
func (s *Sequence) markUses(v uint64) {
	qi := s.q.Index
	s.obj.MarkUse(qi, v)
	for _, o := range s.held {
		o.MarkUse(qi, v)
	}
	s.last = max(s.last, v)
}

// SubmitOption adds timeline waits and signals to Submit.
type SubmitOption func(*submitOpts) error

type submitOpts struct {
	waits, signals []timeline.Point
	stage          uint32
}

// Wait makes the submit wait, on the GPU, until t reaches v.
func Wait(t *timeline.Timeline, v uint64) SubmitOption {
	return func(o *submitOpts) error {
		o.waits = append(o.waits, timeline.Point{Timeline: t, Value: v})
		return nil
	}
}

// Signal makes the submit set t to v when it completes. Values on a
// timeline must increase across every signal, host or GPU.
func Signal(t *timeline.Timeline, v uint64) SubmitOption {
	return func(o *submitOpts) error {
		o.signals = append(o.signals, timeline.Point{Timeline: t, Value: v})
		return nil
	}
}

// WaitStage overrides the pipeline stages that the submit's waits block.
// By default they block the stage of the first recorded operation
// (compute for a dispatch, transfer for a copy or fill), or all commands.
func WaitStage(stages uint32) SubmitOption {
	return func(o *submitOpts) error {
		if stages == 0 {
			return core.Invalid("WaitStage(0)")
		}
		o.stage = stages
		return nil
	}
}

// Submit submits the sequence with timeline waits and signals and returns
// at once; it never blocks the host. A submit whose waits are not yet
// signalled, or promised by a signal already submitted, is held on the host
// and released the moment they are, so no order of submits, from any
// goroutines onto any queues, can deadlock the driver, not even on a single
// queue. Ordering between submits comes from their timeline waits. A signal
// value that does not increase, or a timeline of another Manager, is an
// error before anything reaches the driver. ctx is checked on entry only;
// use it with Pending.Wait to bound waiting.
func (s *Sequence) Submit(ctx context.Context, opts ...SubmitOption) Pending {
	if err := ctx.Err(); err != nil {
		return Pending{err: err}
	}
	if err := s.dev.Enter(); err != nil {
		return Pending{err: err}
	}
	defer s.dev.Exit()
	var o submitOpts
	for _, f := range opts {
		if f == nil {
			continue
		}
		if err := f(&o); err != nil {
			return Pending{err: err}
		}
	}
	var tls []*timeline.Timeline
	points := func(ps []timeline.Point, stage uint32) ([]core.Point, error) {
		out := make([]core.Point, len(ps))
		for i, p := range ps {
			if p.Timeline == nil {
				return nil, core.Invalid("Submit: nil timeline")
			}
			if p.Timeline.Object().Closed() {
				return nil, core.Closed("Submit: timeline")
			}
			out[i] = core.Point{TL: p.Timeline.State(), Value: p.Value, Stage: stage}
			tls = append(tls, p.Timeline)
		}
		return out, nil
	}

	s.mu.Lock()
	if err := s.prepare(); err != nil {
		s.mu.Unlock()
		return Pending{err: err}
	}
	stage := o.stage
	if stage == 0 {
		stage = s.firstStage
	}
	waits, err := points(o.waits, stage)
	if err != nil {
		s.mu.Unlock()
		return Pending{err: err}
	}
	signals, err := points(o.signals, 0)
	if err != nil {
		s.mu.Unlock()
		return Pending{err: err}
	}
	cmd := s.submitCmd()
	// The sequence and the timelines stay alive while the submit is held;
	// once released, their uses are marked with its queue value.
	s.obj.Acquire()
	for _, t := range tls {
		t.Object().Acquire()
	}
	s.inflight++
	s.mu.Unlock()

	sub := &core.Submission{Q: s.q, Cmd: cmd, Hazards: s.hz, Waits: waits, Signals: signals, Logical: s.queue}
	sub.OnRelease = func(v uint64, err error) {
		s.mu.Lock()
		if err == nil {
			s.markUses(v)
			for _, t := range tls {
				t.Object().MarkUse(s.q.Index, v)
			}
		}
		s.inflight--
		s.mu.Unlock()
		for _, t := range tls {
			t.Object().Release()
		}
		s.obj.Release()
	}
	if err := s.dev.Schedule(sub); err != nil {
		sub.OnRelease(0, err)
		return Pending{err: fmt.Errorf("sequence: %w", err)}
	}
	return Pending{q: s.q, sub: sub}
}

// prepare checks the sequence can be submitted and builds it if needed.
func (s *Sequence) prepare() error {
	if s.closed || s.obj.Closed() {
		return core.Closed("sequence")
	}
	if s.err != nil {
		return s.err
	}
	for _, o := range s.held {
		if o.Closed() {
			return fmt.Errorf("sequence: a recorded tensor or algorithm: %w", core.ErrClosed)
		}
	}
	if s.built {
		return nil
	}
	if s.inflight > 0 || !s.q.Done(s.last) {
		return fmt.Errorf("sequence: re-recording: %w (wait for the last submit first)", core.ErrPending)
	}
	if err := s.build(); err != nil {
		s.releaseBuild()
		return fmt.Errorf("sequence: %w", s.dev.Check(err))
	}
	s.built = true
	return nil
}

// build records the command buffer from the ops.
func (s *Sequence) build() error {
	s.releaseBuild()
	if err := vk.ResetCommandBuffer(s.cmd); err != nil {
		return err
	}
	if err := vk.BeginCommandBuffer(s.cmd, vk.CommandBufferSimultaneousUse); err != nil {
		return err
	}
	if s.timestamps {
		if err := s.ensureQueries(len(s.ops) + 1); err != nil {
			return err
		}
		vk.CmdResetQueryPool(s.cmd, s.qpool, 0, uint32(len(s.ops)+1))
	}
	// No barrier orders this command buffer after earlier submits: each
	// submit's prelude does, from s.hz.Uses (see submitCmd).
	s.hz.Uses = s.hz.Uses[:0]
	clear(s.useIdx)
	if s.timestamps {
		vk.CmdWriteTimestamp(s.cmd, vk.StageTopOfPipe, s.qpool, 0)
	}
	clear(s.state)
	s.firstStage = vk.StageAllCommands
	if len(s.ops) > 0 {
		switch s.ops[0].kind {
		case opDispatch:
			s.firstStage = vk.StageComputeShader
		case opCopy, opFill:
			s.firstStage = vk.StageTransfer
		}
	}
	for i := range s.ops {
		if err := s.recordOp(&s.ops[i]); err != nil {
			return err
		}
		if s.timestamps {
			vk.CmdWriteTimestamp(s.cmd, vk.StageBottomOfPipe, s.qpool, uint32(i+1))
		}
	}
	return vk.EndCommandBuffer(s.cmd)
}

func (s *Sequence) ensureQueries(n int) error {
	if s.qpool != 0 && s.nQuery >= n {
		return nil
	}
	if s.qpool != 0 {
		s.dev.VK.DestroyQueryPool(s.qpool)
		s.qpool = 0
	}
	p, err := s.dev.VK.CreateTimestampPool(uint32(n))
	if err != nil {
		return err
	}
	s.qpool, s.nQuery = p, n
	return nil
}

// use is one buffer access by an op.
type use struct {
	alloc  *core.Allocation
	stage  uint32
	access uint32
}

// barrierFor records the barrier that orders uses after earlier accesses in
// this build, then updates the tracked state.
func (s *Sequence) barrierFor(uses []use) {
	s.barriers = s.barriers[:0]
	var src, dst uint32
	for _, u := range uses {
		s.summarize(u)
		st := s.state[u.alloc]
		if st == nil {
			st = &access{}
			s.state[u.alloc] = st
		}
		write := u.access&writeAccess != 0
		readBits := u.access &^ writeAccess
		var bsrc, bsrcAccess uint32
		need := false
		if st.wStage != 0 && (write || st.visStage&u.stage != u.stage || st.visAccess&readBits != readBits) {
			bsrc |= st.wStage
			bsrcAccess = st.wAccess
			need = true
		}
		if write && st.rStages != 0 {
			bsrc |= st.rStages
			need = true
		}
		if st.wStage == 0 && u.stage == vk.StageHost {
			// Writes from earlier submits reach the host only through a
			// barrier to the host stage.
			bsrc |= vk.StageAllCommands
			bsrcAccess |= vk.AccessMemoryWrite
			need = true
		}
		if need {
			s.barriers = append(s.barriers, vk.BufferBarrier{
				Buffer: u.alloc.Buffer, Size: vk.WholeSize,
				SrcAccess: bsrcAccess, DstAccess: u.access,
				SrcFamily: vk.QueueFamilyIgnored, DstFamily: vk.QueueFamilyIgnored,
			})
			src |= bsrc
			dst |= u.stage
		}
		if write {
			*st = access{wStage: u.stage, wAccess: u.access & writeAccess}
		} else {
			st.rStages |= u.stage
			if need {
				st.visStage |= u.stage
				st.visAccess |= readBits
			}
		}
	}
	if len(s.barriers) > 0 && core.InferBarriers {
		vk.CmdPipelineBarrier(s.cmd, src, dst, 0, 0, s.barriers)
	}
}

// summarize adds u to the command buffer's per-buffer uses, from which each
// submit's prelude orders it after earlier submits.
func (s *Sequence) summarize(u use) {
	if u.stage == vk.StageHost {
		// A host read happens after the submit completes; the barrier to
		// the host stage is in the command buffer (barrierFor).
		return
	}
	i, ok := s.useIdx[u.alloc]
	if !ok {
		i = len(s.hz.Uses)
		s.useIdx[u.alloc] = i
		// A tensor's allocation is its whole VkBuffer, or for a view of a
		// foreign buffer the range [0, Size) that descriptors bind.
		s.hz.Uses = append(s.hz.Uses, core.BufferUse{Buffer: u.alloc.Buffer, Size: u.alloc.Size})
	}
	b := &s.hz.Uses[i]
	if w := u.access & writeAccess; w != 0 {
		b.WStages |= u.stage
		b.WAccess |= w
	}
	if r := u.access &^ writeAccess; r != 0 {
		b.RStages |= u.stage
		b.RAccess |= r
	}
}

// merge folds uses of the same buffer within one op together.
func merge(uses []use) []use {
	out := uses[:0]
	for _, u := range uses {
		found := false
		for i := range out {
			if out[i].alloc == u.alloc {
				out[i].stage |= u.stage
				out[i].access |= u.access
				found = true
				break
			}
		}
		if !found {
			out = append(out, u)
		}
	}
	return out
}

func (s *Sequence) recordOp(o *op) error {
	switch o.kind {
	case opSyncDevice:
		// Host writes made before the submit are visible to it.
	case opSyncLocal:
		var uses []use
		for _, t := range o.tensors {
			if t.Mapped() {
				uses = append(uses, use{t.Allocation(), vk.StageHost, vk.AccessHostRead})
			}
		}
		s.barrierFor(merge(uses))
	case opCopy:
		src, dst := o.tensors[0].Allocation(), o.tensors[1].Allocation()
		s.barrierFor(merge([]use{{src, vk.StageTransfer, vk.AccessTransferRead}, {dst, vk.StageTransfer, vk.AccessTransferWrite}}))
		vk.CmdCopyBuffer(s.cmd, src.Buffer, dst.Buffer, o.regions)
	case opFill:
		// Only the tensor's range: a view's buffer may be larger, and an
		// import's neighbouring bytes belong to the producer.
		// The pattern buffer is written by the host only, before any
		// submit, so reading it needs no barrier.
		a := o.tensors[0].Allocation()
		s.barrierFor([]use{{a, vk.StageTransfer, vk.AccessTransferWrite}})
		if o.fillSize > 0 {
			vk.CmdFillBuffer(s.cmd, a.Buffer, 0, o.fillSize, o.fill)
		}
		if o.fillSrc != nil {
			// The tail starts at a multiple of 4: its bytes are the
			// pattern's first ones.
			tail := o.tensors[0].Bytes() - o.fillSize
			vk.CmdCopyBuffer(s.cmd, o.fillSrc.Buffer, a.Buffer, []vk.CopyRegion{{SrcOffset: 0, DstOffset: o.fillSize, Size: tail}})
		}
	case opBarrier:
		b := o.barrier
		vk.CmdPipelineBarrier(s.cmd, b.SrcStages, b.DstStages, b.SrcAccess, b.DstAccess, nil)
	case opDispatch:
		return s.recordDispatch(o)
	}
	return nil
}

func (s *Sequence) recordDispatch(o *op) error {
	set, err := o.algo.TakeBinding(o.tensors)
	if err != nil {
		return err
	}
	s.bindings = append(s.bindings, builtBinding{algo: o.algo, set: set})
	uses := make([]use, 0, len(o.tensors))
	for i, t := range o.tensors {
		acc := uint32(vk.AccessShaderRead | vk.AccessShaderWrite)
		switch o.algo.Access(i) {
		case algorithm.ReadOnly:
			acc = vk.AccessShaderRead
		case algorithm.WriteOnly:
			acc = vk.AccessShaderWrite
		}
		uses = append(uses, use{t.Allocation(), vk.StageComputeShader, acc})
	}
	s.barrierFor(merge(uses))
	lim := s.dev.Info.Limits.MaxComputeWorkGroupCount
	g := o.groups
	if g[1] > lim[1] || g[2] > lim[2] {
		return core.Invalid("Dispatch: workgroups %v exceed maxComputeWorkGroupCount %v", g, lim)
	}
	pipe, layout := o.algo.Pipeline()
	vk.CmdBindComputePipeline(s.cmd, pipe)
	vk.CmdBindDescriptorSet(s.cmd, layout, set)
	vk.CmdPushConstants(s.cmd, layout, o.push)
	// The first piece is a plain vkCmdDispatch: the synchronization
	// validation layer we test under (1.3.239) does not hazard-track
	// vkCmdDispatchBase, so recording every dispatch with it would hide
	// missing barriers from the tests. Dispatches wider than the device
	// limit are split; the later pieces' base keeps gl_GlobalInvocationID
	// counting across them (tested by value).
	first := min(lim[0], g[0])
	vk.CmdDispatch(s.cmd, first, g[1], g[2])
	for base := first; base < g[0]; {
		n := min(lim[0], g[0]-base)
		vk.CmdDispatchBase(s.cmd, base, 0, 0, n, g[1], g[2])
		base += n
	}
	return nil
}

// Timestamps returns the GPU time each operation took in the last submit,
// in recording order. The sequence needs WithTimestamps and a completed
// submit.
func (s *Sequence) Timestamps() ([]time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.timestamps {
		return nil, core.Invalid("Timestamps: sequence created without WithTimestamps")
	}
	if s.obj.Closed() {
		return nil, core.Closed("sequence")
	}
	if s.last == 0 || !s.q.Done(s.last) {
		return nil, fmt.Errorf("sequence: Timestamps: %w", core.ErrPending)
	}
	if err := s.dev.Enter(); err != nil {
		return nil, err
	}
	defer s.dev.Exit()
	raw := make([]uint64, len(s.ops)+1)
	if err := s.dev.VK.QueryResults64(s.qpool, 0, raw); err != nil {
		return nil, err
	}
	period := float64(s.dev.Info.Limits.TimestampPeriod)
	out := make([]time.Duration, len(s.ops))
	for i := range out {
		out[i] = time.Duration(float64(raw[i+1]-raw[i]) * period)
	}
	return out, nil
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
	// Drop the tensors before handing the descriptor sets back, and the
	// algorithms after: a tensor destroyed here must be gone before another
	// sequence can rewrite and bind a set that pointed at it (the
	// validation layer otherwise may see the destruction reach a set
	// already reused).
	algos := make(map[*core.Object]int)
	for _, o := range s.ops {
		if o.algo != nil {
			algos[o.algo.Object()]++
		}
	}
	for _, o := range s.held {
		if algos[o] == 0 {
			o.Release()
		}
	}
	s.releaseBuild()
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

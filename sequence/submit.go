package sequence

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

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
	after          []*tensor.Tensor
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

// AfterUses makes the submit wait, on the GPU, for every use of ts that was
// submitted on other queues before it (sequences, graph runs, eager ops;
// through any tensor over the same buffer, dlpack views included),
// without a timeline of the caller's. Uses on the submit's own queue need
// no wait: the sequence's barriers order them. It is how work moves from
// one queue to another without the host waiting.
func AfterUses(ts ...*tensor.Tensor) SubmitOption {
	return func(o *submitOpts) error {
		for i, t := range ts {
			if t == nil {
				return core.Invalid("AfterUses: tensor %d is nil", i)
			}
		}
		o.after = append(o.after, ts...)
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
	// The scheduler holds a reference on every timeline while the submit
	// is held and marks their use with its queue value (core.Schedule): a
	// timeline closed meanwhile lives until the batch is retired.
	points := func(ps []timeline.Point, stage uint32) ([]core.Point, error) {
		out := make([]core.Point, len(ps))
		for i, p := range ps {
			if p.Timeline == nil {
				return nil, core.Invalid("Submit: nil timeline")
			}
			out[i] = core.Point{TL: p.Timeline.State(), Value: p.Value, Stage: stage}
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
	var signals []core.Point
	if err == nil {
		signals, err = points(o.signals, 0)
	}
	if err != nil {
		s.mu.Unlock()
		return Pending{err: err}
	}
	var after []core.QueuePoint
	if len(o.after) > 0 {
		objs := make([]*core.Object, len(o.after))
		for i, t := range o.after {
			objs[i] = t.Object()
		}
		after = s.dev.UsesElsewhere(s.q, objs...)
	}
	cmd := s.submitCmd()
	// The sequence stays alive while the submit is held; once released,
	// its uses are marked with the queue value.
	s.obj.Acquire()
	s.inflight++
	s.mu.Unlock()

	sub := &core.Submission{Q: s.q, Cmd: cmd, Hazards: s.hz, Waits: waits, Signals: signals, After: after, Logical: s.queue}
	done := func(v uint64, err error) {
		s.mu.Lock()
		if err == nil {
			s.markUses(v)
		}
		s.inflight--
		s.mu.Unlock()
		s.obj.Release()
	}
	sub.OnRelease = func(v uint64, err error) {
		if err != nil {
			// Accepted, then failed (its driver submit, or a point it
			// waits on): what it would have written was not written.
			s.mu.Lock()
			for _, o := range s.held {
				o.Fail(err)
			}
			s.mu.Unlock()
		}
		done(v, err)
	}
	if err := s.dev.Schedule(sub); err != nil {
		done(0, err) // refused: nothing happened, nothing failed
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
	if s.detached {
		return core.Invalid("sequence: detached (Attach its tensors first)")
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

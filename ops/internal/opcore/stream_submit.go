package opcore

import (
	"context"
	"errors"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// Submitting a call: a sequence of the stream's pool recorded for it
// (cache misses, and hits with every recording of the op in flight), the
// host read barrier of mapped outputs, the submit itself, and the bound on
// calls in flight.

// submit records the bound op into a sequence of the pool, with a host
// read barrier for mapped outputs, and submits it; waited says the call
// already waited on the host for the in-flight bound. Called with mu held.
func (s *Stream) submit(p *prepared, in, outs []*tensor.Tensor, waited bool) error {
	if len(p.op.steps) == 0 {
		return nil // empty tensors: nothing to compute
	}
	seq, w, err := s.take()
	if err != nil {
		return err
	}
	waited = waited || w
	p.op.Record(seq)
	s.syncMapped(seq, outs)
	if err := seq.Err(); err != nil {
		s.recycle(seq)
		return err
	}
	pend := s.send(seq, in, outs)
	if err := pend.Err(); err != nil {
		s.recycle(seq)
		return err
	}
	s.queued(inflight{seq: seq, p: pend}, waited)
	return nil
}

// queued puts a call just submitted in the ring (a recording's marked busy
// and used now) and takes back what completed. Called with mu held.
func (s *Stream) queued(f inflight, waited bool) {
	s.submits++
	if r := f.rec; r != nil {
		r.busy, r.used = true, s.submits
	}
	s.ring = append(s.ring, f)
	s.last, s.has = f.p, true
	s.reclaim() // after the submit, not before (reclaim)
	s.schedule()
	s.dev.CountEagerSubmit(waited)
}

// syncMapped records the host read barrier of the mapped outputs.
func (s *Stream) syncMapped(seq *sequence.Sequence, outs []*tensor.Tensor) {
	n := 0
	for _, t := range outs {
		if t.Mapped() {
			n++
		}
	}
	if n == 0 {
		return
	}
	mapped := make([]*tensor.Tensor, 0, n)
	for _, t := range outs {
		if t.Mapped() {
			mapped = append(mapped, t)
		}
	}
	seq.SyncLocal(mapped...)
}

// send submits seq, recorded for a call over in and outs. Uses of the
// tensors on other physical queues are waited for on the GPU (Submit,
// through the scheduler); with one physical queue, or none pending, the
// plain submit.
func (s *Stream) send(seq *sequence.Sequence, in, outs []*tensor.Tensor) sequence.Pending {
	if s.dev.PhysicalQueues() > 1 && s.dev.UsesElsewhere(s.q, objects(in, outs)...) != nil {
		return seq.Submit(context.Background(), sequence.AfterUses(append(append([]*tensor.Tensor(nil), in...), outs...)...))
	}
	return seq.EvalAsync()
}

func objects(in, outs []*tensor.Tensor) []*core.Object {
	objs := make([]*core.Object, 0, len(in)+len(outs))
	for _, t := range in {
		objs = append(objs, t.Object())
	}
	for _, t := range outs {
		objs = append(objs, t.Object())
	}
	return objs
}

// take returns a cleared sequence: a free one, one whose submit completed,
// a new one, or, with maxHeld submits in flight, the oldest once it
// completes (waited is then true). Called with mu held.
func (s *Stream) take() (seq *sequence.Sequence, waited bool, err error) {
	if waited, err = s.backpressure(); err != nil {
		return nil, false, err
	}
	if n := len(s.free); n > 0 {
		seq = s.free[n-1]
		s.free = s.free[:n-1]
		return seq, waited, nil
	}
	seq, err = sequence.New(s.owner, s.queue)
	return seq, waited, err
}

// backpressure waits, with maxHeld submits in flight after reclaiming what
// completed, for the oldest (waited is then true); below the bound it
// does nothing (calls reclaim after their submit). Called with mu held.
func (s *Stream) backpressure() (waited bool, err error) {
	if len(s.ring) < s.maxHeld {
		return false, nil
	}
	if s.reclaim(); len(s.ring) >= s.maxHeld {
		// Back-pressure: the call holds the gate, so the wait must end
		// when Manager.Close starts, not hold Close's drain until its
		// deadline. Queue waits enter the gate per slice and fail then;
		// the context covers a submit still held back, whose release is
		// a channel (Close drops held submits only after the drain).
		ctx, cancel := context.WithTimeout(s.dev.Closing(), s.dev.WaitTimeout)
		err := s.ring[0].p.Wait(ctx)
		if cause := context.Cause(ctx); err != nil && errors.Is(cause, core.ErrClosed) {
			err = cause
		}
		cancel()
		if err != nil {
			return false, err
		}
		waited = true
		s.reclaim()
	}
	return waited, nil
}

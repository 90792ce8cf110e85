package sequence

import (
	"fmt"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Detach and Attach keep a recorded command buffer for reuse without
// keeping its tensors alive: package ops' streams record an op once per
// set of buffers and submit it again with the tensors of each call, which
// the stream's output pool places in the same buffers.
//
// A detached sequence holds no reference on its tensors, but pins their
// buffers (core.Allocation.PinBuffer): its descriptor sets and barriers
// still name them, so closing a tensor frees its memory only once the
// sequence is attached to another tensor over the buffer, cleared or
// closed.

// Detach drops the sequence's references on the tensors it recorded once
// its last submit has completed, and keeps the recording (command buffer,
// descriptor sets and barriers) for Attach. A detached sequence cannot be
// submitted or re-recorded until Attach, Clear or Close. It fails, and
// changes nothing, while a submit is pending, on a recording error, before
// the first build, and when a tensor is a view or an import (its owner may
// free its buffer whatever the sequence pins).
func (s *Sequence) Detach() error {
	if err := s.dev.Enter(); err != nil {
		return err
	}
	defer s.dev.Exit()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed || s.obj.Closed():
		return core.Closed("sequence")
	case s.detached:
		return nil
	case s.err != nil:
		return s.err
	case !s.built:
		return core.Invalid("sequence: Detach: not recorded yet (submit it first)")
	case s.inflight > 0 || !s.q.Done(s.last):
		return fmt.Errorf("sequence: Detach: %w (wait for the last submit first)", core.ErrPending)
	}
	s.pinned = s.pinned[:0]
	for i := range s.ops {
		for _, t := range s.ops[i].tensors {
			a := t.Allocation()
			if !a.PinBuffer() {
				s.unpin()
				return core.Invalid("sequence: Detach: a tensor is a view or an import")
			}
			s.pinned = append(s.pinned, a)
		}
	}
	// Keep the algorithms' references (one per dispatch), drop the tensors'.
	s.held = s.held[:0]
	for i := range s.ops {
		o := &s.ops[i]
		for _, t := range o.tensors {
			t.Object().Release()
		}
		if o.algo != nil {
			s.held = append(s.held, o.algo.Object())
		}
	}
	s.detached = true
	return nil
}

// Attach gives a detached sequence its tensors again, in recording order:
// each operation's tensors, a dispatch's in binding order (the bindings
// when it was recorded), SyncLocal's and SyncDevice's as given, a Copy's
// source then destination, a Fill's tensor. Each must be a tensor over the
// buffer recorded at its position, with the same dtype and length; then
// the sequence takes a reference on each and can be submitted again as
// recorded, and Attach returns true. It returns false, attaching nothing,
// when the sequence is not detached or a tensor does not match (Clear and
// record it again then), and an error when a tensor is closed or writes a
// read-only one.
func (s *Sequence) Attach(ts []*tensor.Tensor) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.detached || s.closed || len(ts) != len(s.pinned) {
		return false, nil
	}
	k := 0
	for i := range s.ops {
		o := &s.ops[i]
		for j, old := range o.tensors {
			t := ts[k]
			if t == nil || t.Allocation() != s.pinned[k] || t.Dtype() != old.Dtype() || t.Len() != old.Len() {
				return false, nil
			}
			if t.ReadOnly() && writes(o, j) {
				return false, core.Invalid("sequence: Attach: tensor %d is read-only and recorded as written", k)
			}
			k++
		}
	}
	for k, t := range ts {
		if !t.Object().TryAcquire() {
			for _, u := range ts[:k] {
				u.Object().Release()
			}
			return false, core.Closed(fmt.Sprintf("sequence: Attach: tensor %d", k))
		}
	}
	k = 0
	for i := range s.ops {
		o := &s.ops[i]
		for j := range o.tensors {
			t := ts[k]
			o.tensors[j] = t
			s.held = append(s.held, t.Object())
			if writes(o, j) {
				t.Allocation().MarkWritten()
			}
			k++
		}
	}
	s.unpin()
	s.detached = false
	return true, nil
}

// Detached reports whether the sequence is detached (Detach).
func (s *Sequence) Detached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.detached
}

// writes reports whether op o writes its tensor j.
func writes(o *op, j int) bool {
	switch o.kind {
	case opCopy:
		return j == 1
	case opFill:
		return true
	case opDispatch:
		return o.algo.Access(j) != algorithm.ReadOnly
	}
	return false
}

// unpin drops the pins of a detached sequence: after its descriptor sets
// stopped naming the buffers (ReturnBinding) or its tensors hold them.
// Called with mu held.
func (s *Sequence) unpin() {
	for _, a := range s.pinned {
		s.dev.UnpinBuffer(a)
	}
	clear(s.pinned)
	s.pinned = s.pinned[:0]
}

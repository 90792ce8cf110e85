package opcore

import (
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// Recordings: a prepared op keeps up to maxRecordings sequences recorded
// with its dispatches (and the host read barrier of mapped outputs), each
// for one set of buffers. A call on a cache hit takes a recording that is
// not in flight and whose buffers are the call's (the output pool hands
// back the buffers of the op's earlier outputs, so a loop of calls cycles
// through a few), attaches the call's tensors to it
// (sequence.Attach) and submits its command buffer as recorded: no
// vkResetCommandBuffer, no descriptor writes, no recording. Otherwise it
// records an idle recording again for the call's buffers (or a new one),
// and with every recording in flight it records a sequence of the stream's
// pool as before.
//
// Between calls a recording holds no reference on the call's tensors
// (sequence.Detach, when its submit completes): closing them frees their
// memory, except that a buffer a recording names stays allocated (pinned)
// until the recording is recorded again for other buffers or dropped.
// The stream drops its idle recordings, so that memory comes back, when it
// goes idle (no call for one idle period, stream_idle.go), at Synchronize
// and TrimPool, and when the op leaves the cache or the stream closes; a
// busy stream keeps them.
//
// Order and hazards are the sequence's: a resubmitted command buffer keeps
// its leading barrier (write-after-write and write-after-read against a
// previous submit of itself), and every submit's prelude orders it after
// other command buffers that touched its buffers on the queue (core
// hazard tracking), so a recording is correct whatever ran before it.

// maxRecordings bounds the recordings of one prepared op: a synchronous
// loop whose outputs live until the next call cycles through two or three
// output buffers.
const maxRecordings = 4

// recording is one kept sequence of a prepared op. Its Stream's lock
// guards it.
type recording struct {
	seq  *sequence.Sequence
	busy bool   // submitted, not reclaimed yet
	used uint64 // the stream's submits at its last submit (LRU)
	dead bool   // dropped (its op left the cache): seq is closed
}

// callTensors appends to ts the call's tensors in the order a recording
// of p names them: each dispatch's bindings, then the mapped outputs.
func (p *prepared) callTensors(ts, in, outs []*tensor.Tensor) []*tensor.Tensor {
	for _, row := range p.binds {
		for _, sl := range row {
			switch sl.kind {
			case fromIn:
				ts = append(ts, in[sl.i])
			case fromOut:
				ts = append(ts, outs[sl.i])
			default:
				ts = append(ts, sl.t)
			}
		}
	}
	for _, t := range outs {
		if t.Mapped() {
			ts = append(ts, t)
		}
	}
	return ts
}

// submitRecorded submits a call of the cached op p over in and outs
// through one of its recordings (see above). Called with mu held.
func (s *Stream) submitRecorded(p *prepared, in, outs []*tensor.Tensor) error {
	if len(p.op.steps) == 0 {
		return nil // empty tensors: nothing to compute
	}
	waited, err := s.backpressure()
	if err != nil {
		return err
	}
	s.ts = p.callTensors(s.ts[:0], in, outs)
	defer clear(s.ts) // the stream keeps no caller's tensor
	var idle *recording
	live := p.recs[:0]
	for _, r := range p.recs {
		if !r.dead {
			live = append(live, r)
		}
	}
	clear(p.recs[len(live):])
	p.recs = live
	for _, r := range p.recs {
		if r.busy {
			continue
		}
		ok, err := r.seq.Attach(s.ts)
		if err != nil {
			return err
		}
		if ok {
			s.replays++
			return s.launch(r, in, outs, waited)
		}
		if idle == nil || r.used < idle.used {
			idle = r // the least recently used
		}
	}
	if len(p.recs) < maxRecordings {
		// A new recording rather than recording an idle one again: the
		// buffers it names may come back at the next call.
		seq, err := sequence.New(s.owner, s.queue)
		if err != nil {
			return err
		}
		idle = &recording{seq: seq}
		p.recs = append(p.recs, idle)
	}
	if err := p.bind(in, outs); err != nil {
		return err
	}
	defer p.unbind()
	if idle != nil && idle.seq.Clear() != nil {
		idle.dead = true // closed under it: pruned at the next call
		_ = idle.seq.Close()
		idle = nil
	}
	if idle == nil {
		return s.submit(p, in, outs, waited) // every recording in flight
	}
	s.records++
	p.op.Record(idle.seq)
	s.syncMapped(idle.seq, outs)
	if err := idle.seq.Err(); err != nil {
		_ = idle.seq.Clear()
		return err
	}
	return s.launch(idle, in, outs, waited)
}

// launch submits the attached or newly recorded r and puts it in the
// ring. Called with mu held.
func (s *Stream) launch(r *recording, in, outs []*tensor.Tensor, waited bool) error {
	pend := s.send(r.seq, in, outs)
	if err := pend.Err(); err != nil {
		_ = r.seq.Clear()
		return err
	}
	s.queued(inflight{seq: r.seq, p: pend, rec: r}, waited)
	return nil
}

// settle makes r idle again once its submit completed: it drops its
// references on the call's tensors and keeps the recording, or, when it
// cannot be kept (a view or an import among the tensors), clears it.
// Called with mu held.
func (s *Stream) settle(r *recording) {
	r.busy = false
	if r.dead {
		return
	}
	if r.seq.Detach() == nil {
		return
	}
	if r.seq.Clear() != nil {
		r.dead = true
		_ = r.seq.Close()
	}
}

// dropRecordings clears every idle recording of the cached ops, so that the
// buffers they pin are freed if their tensors were. Called with mu held.
func (s *Stream) dropRecordings() {
	for e := s.cache.lru.Front(); e != nil; e = e.Next() {
		for _, r := range e.Value.(*prepared).recs {
			if !r.busy && !r.dead && r.seq.Detached() {
				if r.seq.Clear() != nil {
					r.dead = true
					_ = r.seq.Close()
				}
			}
		}
	}
}

// close closes p's recordings and op (evicted, or the stream closes).
// Work in flight completes first, as for any closed sequence.
func (p *prepared) close() {
	for _, r := range p.recs {
		r.dead = true
		_ = r.seq.Close()
	}
	p.recs = nil
	_ = p.op.Close()
}

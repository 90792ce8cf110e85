package core

import "github.com/vkflow/vkflow/vk"

// Signals of one timeline from several physical queues.
//
// Vulkan requires a timeline's signal operations to execute in increasing
// order (VUID-VkSubmitInfo-pSignalSemaphores-03242: the value must exceed
// the semaphore's value when the signal executes). The scheduler hands a
// timeline's signals to the driver in increasing order, which orders them
// on one queue; but two queues run independently, so a signal of value 4
// on queue B could execute before the signal of 3 on queue A, and the
// semaphore would move backwards (on an NVIDIA H200 the random-order
// scheduler test hung: docs/BENCHMARKS.md, GPU pass of 2026-11-26). So a
// submit that signals a timeline last signalled from another physical
// queue also waits, on the GPU, for that earlier value. The earlier
// signal has reached the driver already, so the wait cannot deadlock a
// queue, and it costs nothing on one queue (lavapipe), where it is never
// added.

// build fills sc.sub with s's waits (its own, its cross-queue After
// points, and the order of signals across queues) and signals. Called
// with mu held; it allocates nothing in steady state.
func (sc *scheduler) build(s *Submission) *vk.Submit {
	b := &sc.sub
	b.Cmd = s.Cmd
	b.WaitSems, b.WaitValues, b.WaitStages = b.WaitSems[:0], b.WaitValues[:0], b.WaitStages[:0]
	b.SignalSems, b.SignalValues = b.SignalSems[:0], b.SignalValues[:0]
	wait := func(sem vk.Semaphore, v uint64, stage uint32) {
		if stage == 0 {
			stage = vk.StageAllCommands
		}
		b.WaitSems = append(b.WaitSems, sem)
		b.WaitValues = append(b.WaitValues, v)
		b.WaitStages = append(b.WaitStages, stage)
	}
	for _, w := range s.Waits {
		wait(w.TL.Sem, w.Value, w.Stage)
	}
	for _, a := range s.After {
		wait(s.Q.dev.queues[a.Queue].sem, a.Value, 0)
	}
	for i, p := range s.Signals {
		t := p.TL
		if firstOf(s.Signals, i) && t.lastQ != nil && t.lastQ != s.Q && !s.waitsFor(t, t.last) {
			wait(t.Sem, t.last, 0)
		}
		b.SignalSems = append(b.SignalSems, t.Sem)
		b.SignalValues = append(b.SignalValues, p.Value)
	}
	return b
}

// waitsFor reports whether s already waits for t at v or later.
func (s *Submission) waitsFor(t *Timeline, v uint64) bool {
	for _, w := range s.Waits {
		if w.TL == t && w.Value >= v {
			return true
		}
	}
	return false
}

// submit hands s to its queue's driver and records its signals as the
// last of their timelines. Called with mu held.
func (sc *scheduler) submit(s *Submission) (uint64, error) {
	if t := s.Q.dev.tracer; t != nil && s.held {
		t.async("held", t.at(s.since), map[string]any{"logical queue": s.Logical, "queue": s.Q.Index})
	}
	b := sc.build(s)
	s.Q.Lock()
	v, err := s.Q.SubmitLocked(b, s.Hazards)
	s.Q.Unlock()
	if err == nil {
		for _, p := range s.Signals {
			if p.Value > p.TL.last {
				p.TL.lastQ, p.TL.last = s.Q, p.Value
			}
		}
	}
	return v, err
}

package core

import "github.com/vkflow/vkflow/internal/minheap"

// compact reclaims the released front of t's signaller queue.
func (t *Timeline) compact() {
	switch {
	case t.head == len(t.signallers):
		t.signallers, t.head = t.signallers[:0], 0
	case t.head > 32 && t.head > len(t.signallers)/2:
		n := copy(t.signallers, t.signallers[t.head:])
		clear(t.signallers[n:])
		t.signallers, t.head = t.signallers[:n], 0
	}
}

// link appends s to the held list.
func (sc *scheduler) link(s *Submission) {
	s.prev, s.next = sc.last, nil
	if sc.last != nil {
		sc.last.next = s
	} else {
		sc.first = s
	}
	sc.last = s
	sc.held++
}

// unlink removes s from the held list.
func (sc *scheduler) unlink(s *Submission) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		sc.first = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		sc.last = s.prev
	}
	s.prev, s.next = nil, nil
	sc.held--
}

// pushReady adds s to the ready heap (ordered by acceptance).
func (sc *scheduler) pushReady(s *Submission) { sc.ready = minheap.Push(sc.ready, s, earlier) }

// popReady removes and returns the earliest accepted ready submit.
func (sc *scheduler) popReady() (s *Submission) {
	sc.ready, s = minheap.Pop(sc.ready, earlier)
	return s
}

func earlier(a, b *Submission) bool { return a.seq < b.seq }

// pushWaiter adds w to t's heap of waits.
func (t *Timeline) pushWaiter(w waiter) { t.waiters = minheap.Push(t.waiters, w, lower) }

// popWaiter removes and returns the wait for the lowest value.
func (t *Timeline) popWaiter() (w waiter) {
	t.waiters, w = minheap.Pop(t.waiters, lower)
	return w
}

func lower(a, b waiter) bool { return a.value < b.value }

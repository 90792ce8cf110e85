package core

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
func (sc *scheduler) pushReady(s *Submission) {
	h := append(sc.ready, s)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].seq <= h[i].seq {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	sc.ready = h
}

// popReady removes and returns the earliest accepted ready submit.
func (sc *scheduler) popReady() *Submission {
	h := sc.ready
	s := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = nil
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].seq < h[m].seq {
			m = l
		}
		if r := l + 1; r < n && h[r].seq < h[m].seq {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	sc.ready = h
	return s
}

// pushWaiter adds w to t's heap of waits.
func (t *Timeline) pushWaiter(w waiter) {
	h := append(t.waiters, w)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].value <= h[i].value {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	t.waiters = h
}

// popWaiter removes and returns the wait for the lowest value.
func (t *Timeline) popWaiter() waiter {
	h := t.waiters
	w := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = waiter{}
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].value < h[m].value {
			m = l
		}
		if r := l + 1; r < n && h[r].value < h[m].value {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	t.waiters = h
	return w
}

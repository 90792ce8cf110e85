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
func (sc *scheduler) pushReady(s *Submission) { sc.ready = heapPush(sc.ready, s, earlier) }

// popReady removes and returns the earliest accepted ready submit.
func (sc *scheduler) popReady() (s *Submission) {
	sc.ready, s = heapPop(sc.ready, earlier)
	return s
}

func earlier(a, b *Submission) bool { return a.seq < b.seq }

// pushWaiter adds w to t's heap of waits.
func (t *Timeline) pushWaiter(w waiter) { t.waiters = heapPush(t.waiters, w, lower) }

// popWaiter removes and returns the wait for the lowest value.
func (t *Timeline) popWaiter() (w waiter) {
	t.waiters, w = heapPop(t.waiters, lower)
	return w
}

func lower(a, b waiter) bool { return a.value < b.value }

// heapPush adds x to the binary min-heap h ordered by less.
func heapPush[T any](h []T, x T, less func(a, b T) bool) []T {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

// heapPop removes the least element of the non-empty heap h; the vacated
// slot is zeroed so the heap keeps no reference to it.
func heapPop[T any](h []T, less func(a, b T) bool) ([]T, T) {
	x := h[0]
	n := len(h) - 1
	h[0] = h[n]
	var zero T
	h[n] = zero
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && less(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < n && less(h[r], h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return h, x
}

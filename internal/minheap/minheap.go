// Package minheap is a binary min-heap over a slice, ordered by a less
// function: the scheduler's ready and waiting submits, and the graph
// compiler's ready nodes.
package minheap

// Push adds x to the binary min-heap h ordered by less.
func Push[T any](h []T, x T, less func(a, b T) bool) []T {
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

// Pop removes the least element of the non-empty heap h; the vacated
// slot is zeroed so the heap keeps no reference to it.
func Pop[T any](h []T, less func(a, b T) bool) ([]T, T) {
	x := h[0]
	n := len(h) - 1
	h[0] = h[n]
	var zero T
	h[n] = zero
	h = h[:n]
	down(h, 0, less)
	return h, x
}

// Heapify orders h as a min-heap by less, in place, and returns it.
func Heapify[T any](h []T, less func(a, b T) bool) []T {
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(h, i, less)
	}
	return h
}

// down moves h[i] down until neither child is less than it.
func down[T any](h []T, i int, less func(a, b T) bool) {
	n := len(h)
	for {
		l, m := 2*i+1, i
		if l < n && less(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < n && less(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

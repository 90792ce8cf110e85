package graph

import (
	"slices"
)

// segment cuts each queue's nodes into command buffers. A node that
// depends on a node of another queue starts a new segment that waits for
// the producer's segment, unless an earlier wait on the queue already
// covers it (vector clocks: a wait on a segment covers everything that
// segment waited for); a producer's segment ends at the producer unless
// the next node is one its consumer needs too, so consumers do not wait
// for unrelated later nodes. Segments are created in
// topological order, and that is their submission order: every wait is
// for a segment submitted earlier, so no run can deadlock.
func (p *plan) segment(nodes []node, preds, succs [][]int, o options) {
	ns := len(p.slots)
	p.bySlot = make([][]int, ns)
	p.segOf = make([]int, len(nodes))
	open := make([]*segment, ns)
	need := make([]int, ns) // per slot: segments the node needs complete
	for pos, i := range p.order {
		s := p.slotOf[i]
		c := cost(&nodes[i])
		clear(need)
		for _, q := range preds[i] {
			if qs := p.slotOf[q]; qs != s {
				seg := p.segs[p.segOf[q]]
				need[qs] = max(need[qs], seg.k+1)
				if open[qs] == seg {
					open[qs] = nil // the producer's segment ends with it
				}
			}
		}
		cur := open[s]
		if cur != nil && (len(cur.nodes) >= o.maxNodes || cur.work+c > o.maxWork || !covers(cur.clock, need) ||
			delays(cur.nodes[len(cur.nodes)-1], i, s, p.slotOf, preds, succs)) {
			cur = nil
		}
		if cur == nil {
			cur = &segment{id: len(p.segs), q: s, k: len(p.bySlot[s]), pos: pos, clock: make([]int, ns)}
			if k := len(p.bySlot[s]); k > 0 {
				copy(cur.clock, p.segs[p.bySlot[s][k-1]].clock)
			}
			p.addWaits(cur, need)
			p.bySlot[s] = append(p.bySlot[s], len(p.segs))
			p.segs = append(p.segs, cur)
			open[s] = cur
		}
		cur.nodes = append(cur.nodes, i)
		cur.work += c
		p.segOf[i] = cur.id

	}
}

// crossRun orders each run after the previous one where they conflict:
// a node that depends on a node of the previous run on another queue
// (wrap edges) makes its segment wait for that segment's previous run,
// unless an earlier segment on its queue already waited for it or a later
// one of that queue. Conflicts on one queue are ordered by the queue's
// hazard tracking. So a graph whose runs touch disjoint buffers on each
// queue, a ring of frame buffers say, lets one queue run ahead of
// another.
func (p *plan) crossRun() {
	need := make([][]int, len(p.segs)) // per segment, per slot: index+1
	for _, e := range p.wrap {
		from, to := p.segs[p.segOf[e.from]], p.segs[p.segOf[e.to]]
		if from.q == to.q {
			continue
		}
		if need[to.id] == nil {
			need[to.id] = make([]int, len(p.slots))
		}
		need[to.id][from.q] = max(need[to.id][from.q], from.k+1)
	}
	done := make([][]int, len(p.slots)) // per slot: waited so far, per slot
	for q := range done {
		done[q] = make([]int, len(p.slots))
	}
	for _, seg := range p.segs {
		for q, k := range need[seg.id] {
			if k > done[seg.q][q] {
				seg.prev = append(seg.prev, segRef{q, k - 1})
				done[seg.q][q] = k
			}
		}
	}
}

// delays reports whether appending node i to the segment ending with node
// last would delay a consumer of last on another queue: one that waits for
// last's segment and does not need i as well. Then last's segment ends
// with it.
func delays(last, i, s int, slotOf []int, preds, succs [][]int) bool {
	for _, c := range succs[last] {
		if slotOf[c] != s && !slices.Contains(preds[c], i) {
			return true
		}
	}
	return false
}

func covers(clock, need []int) bool {
	for q, n := range need {
		if clock[q] < n {
			return false
		}
	}
	return true
}

// addWaits adds the fewest waits that make seg's clock cover need: later
// segments first, each skipped when an earlier-added wait covers it.
func (p *plan) addWaits(seg *segment, need []int) {
	var cands []segRef
	for q, n := range need {
		if n > seg.clock[q] {
			cands = append(cands, segRef{q, n - 1})
		}
	}
	slices.SortFunc(cands, func(a, b segRef) int {
		return p.segs[p.bySlot[b.q][b.k]].pos - p.segs[p.bySlot[a.q][a.k]].pos
	})
	for _, w := range cands {
		if seg.clock[w.q] > w.k {
			continue
		}
		seg.waits = append(seg.waits, w)
		for q, v := range p.segs[p.bySlot[w.q][w.k]].clock {
			seg.clock[q] = max(seg.clock[q], v)
		}
		seg.clock[w.q] = max(seg.clock[w.q], w.k+1)
	}
}

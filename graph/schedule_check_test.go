package graph

import (
	"fmt"
	"sort"

	"github.com/vkflow/vkflow/vk"
)

// CheckSchedule checks, from the compiled plan alone, that every edge is
// honoured: a driver-independent oracle for what the validation layer
// cannot see on lavapipe, whose logical queues share one physical queue.
//
//   - Same command buffer: the producer is in an earlier group, and a
//     barrier between the two groups covers the edge: for a write (RAW,
//     WAW), buffer barriers on the same buffer whose ranges together cover
//     the edge's bytes with its accesses and stages; for a write after
//     read, the stages (an execution dependency); for After, a global
//     barrier.
//   - Same queue, other command buffer: the producer's is submitted first
//     (the queue's hazard tracking orders them).
//   - Other queue: the consumer's command buffer waits, directly or
//     through the waits of those it waits for, for the producer's or a
//     later one of its queue. The clocks are recomputed from the waits,
//     not taken from the plan.
func CheckSchedule(e *Exec) error {
	p := e.plan
	clock := make([][]int, len(p.segs)) // per segment: per slot, segments complete
	for _, seg := range p.segs {
		c := make([]int, len(p.slots))
		if seg.k > 0 {
			copy(c, clock[p.bySlot[seg.q][seg.k-1]])
		}
		for _, w := range seg.waits {
			wid := p.bySlot[w.q][w.k]
			if wid >= seg.id {
				return fmt.Errorf("submit %d waits for submit %d, which is submitted later", seg.id, wid)
			}
			for q, v := range clock[wid] {
				c[q] = max(c[q], v)
			}
			c[w.q] = max(c[w.q], w.k+1)
		}
		clock[seg.id] = c
	}
	for _, ed := range p.edges {
		sf, st := p.segs[p.segOf[ed.from]], p.segs[p.segOf[ed.to]]
		what := fmt.Sprintf("edge %s %d -> %d", hazNames[ed.kind], ed.from, ed.to)
		switch {
		case sf.q != st.q:
			if clock[st.id][sf.q] < sf.k+1 {
				return fmt.Errorf("%s: submit %d (queue slot %d) does not wait for submit %d (queue slot %d)", what, st.id, st.q, sf.id, sf.q)
			}
		case sf != st:
			if sf.k >= st.k {
				return fmt.Errorf("%s: the producer's submit %d follows the consumer's %d on their queue", what, sf.id, st.id)
			}
		default:
			if err := checkBarrier(st, ed, p.groupOf(st, ed.from), p.groupOf(st, ed.to)); err != nil {
				return fmt.Errorf("%s in submit %d: %w", what, st.id, err)
			}
		}
	}
	return nil
}

// groupOf returns the group of node i in seg.
func (p *plan) groupOf(seg *segment, i int) int {
	pos := -1
	for k, n := range seg.nodes {
		if n == i {
			pos = k
		}
	}
	return sort.Search(len(seg.groups), func(g int) bool { return seg.groups[g] > pos }) - 1
}

func checkBarrier(seg *segment, ed edge, gf, gt int) error {
	if gf >= gt {
		return fmt.Errorf("the producer is in group %d, the consumer in group %d", gf, gt)
	}
	bars := seg.bars[gf+1 : gt+1]
	switch {
	case ed.kind == hazOrder:
		for _, b := range bars {
			if b.global {
				return nil
			}
		}
		return fmt.Errorf("no global barrier between groups %d and %d", gf, gt)
	case ed.srcMask == 0:
		for _, b := range bars {
			if b.src&ed.srcStage == ed.srcStage && b.dst&ed.dstStg == ed.dstStg && (len(b.bufs) > 0 || b.global) {
				return nil
			}
		}
		return fmt.Errorf("no barrier between groups %d and %d orders stages %#x before %#x", gf, gt, ed.srcStage, ed.dstStg)
	}
	// The edge's bytes, less those covered by matching buffer barriers.
	type span struct{ lo, hi uint64 }
	var got []span
	for _, b := range bars {
		if b.src&ed.srcStage != ed.srcStage || b.dst&ed.dstStg != ed.dstStg {
			continue
		}
		for _, bb := range b.bufs {
			if bb.Buffer == ed.buf && bb.SrcAccess&ed.srcMask == ed.srcMask && bb.DstAccess&ed.dstMask == ed.dstMask {
				hi := bb.Offset + bb.Size
				if bb.Size == vk.WholeSize {
					hi = ^uint64(0)
				}
				got = append(got, span{bb.Offset, hi})
			}
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i].lo < got[j].lo })
	at := ed.lo
	for _, s := range got {
		if s.lo > at {
			break
		}
		at = max(at, s.hi)
	}
	if at < ed.hi {
		return fmt.Errorf("bytes [%d,%d) of the buffer are not made visible between groups %d and %d (covered up to %d)", ed.lo, ed.hi, gf, gt, at)
	}
	return nil
}

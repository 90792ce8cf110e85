package graph

import (
	"slices"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/vk"
)

// barriers orders each segment's nodes by level, so that independent
// nodes form groups, and puts before each group one barrier holding a
// buffer barrier for each edge into it from the same segment, on the
// edge's range only. A write already made visible to a stage and access
// is not made visible again. (The Exec ends a segment with downloads with
// a barrier to the host on their staging buffers.)
func (p *plan) barriers(accs [][]access) {
	in := make([][]int, len(accs)) // edges into each node
	for k, e := range p.edges {
		in[e.to] = append(in[e.to], k)
	}
	type visKey struct {
		from   int
		buf    vk.Buffer
		lo, hi uint64
	}
	vis := map[visKey]uint32{}
	for _, seg := range p.segs {
		slices.SortStableFunc(seg.nodes, func(a, b int) int { return p.level[a] - p.level[b] })
		clear(vis)
		for g, i := range seg.nodes {
			if g > 0 && p.level[i] == p.level[seg.nodes[g-1]] {
				continue
			}
			seg.groups = append(seg.groups, g)
		}
		seg.bars = make([]barrier, len(seg.groups))
		for gi, start := range seg.groups {
			end := len(seg.nodes)
			if gi+1 < len(seg.groups) {
				end = seg.groups[gi+1]
			}
			b := &seg.bars[gi]
			for _, i := range seg.nodes[start:end] {
				for _, k := range in[i] {
					e := p.edges[k]
					if p.segOf[e.from] != p.segOf[i] {
						continue // ordered by the queue's prelude or a wait
					}
					b.src |= e.srcStage
					b.dst |= e.dstStg
					if e.kind == hazOrder {
						b.src |= stagesOf(accs[e.from])
						b.dst |= stagesOf(accs[i])
						b.global = true
						continue
					}
					key := visKey{e.from, e.buf, e.lo, e.hi}
					if e.kind == hazRAW && vis[key]&e.dstMask == e.dstMask {
						continue
					}
					vis[key] |= e.dstMask
					b.bufs = addBuffer(b.bufs, vk.BufferBarrier{Buffer: e.buf, Offset: e.lo, Size: e.hi - e.lo,
						SrcAccess: e.srcMask, DstAccess: e.dstMask,
						SrcFamily: vk.QueueFamilyIgnored, DstFamily: vk.QueueFamilyIgnored})
				}
			}
			if b.src == 0 {
				b.src = vk.StageTopOfPipe
			}
		}
	}
}

// addBuffer adds b, merged into an existing barrier on the same range.
func addBuffer(bs []vk.BufferBarrier, b vk.BufferBarrier) []vk.BufferBarrier {
	for k := range bs {
		if bs[k].Buffer == b.Buffer && bs[k].Offset == b.Offset && bs[k].Size == b.Size {
			bs[k].SrcAccess |= b.SrcAccess
			bs[k].DstAccess |= b.DstAccess
			return bs
		}
	}
	return append(bs, b)
}

func stagesOf(as []access) uint32 {
	var s uint32
	for _, a := range as {
		s |= a.stage
	}
	if s == 0 {
		s = vk.StageAllCommands
	}
	return s
}

// ordered checks that the plan's schedule orders every edge: inside one
// segment the producer's group comes first (its level is lower), on one
// queue its segment is submitted earlier (the queue's hazard tracking
// orders the two), and across queues the consumer's segment waits for the
// producer's, directly or through another wait (its clock).
func (p *plan) ordered(edges []edge) error {
	for _, e := range edges {
		sf, st := p.segs[p.segOf[e.from]], p.segs[p.segOf[e.to]]
		var ok bool
		switch {
		case sf == st:
			ok = p.level[e.from] < p.level[e.to]
		case sf.q == st.q:
			ok = sf.k < st.k
		default:
			ok = st.clock[sf.q] > sf.k
		}
		if !ok {
			return core.Invalid("the schedule does not order node %d before node %d (%s)", e.from, e.to, hazNames[e.kind])
		}
	}
	return nil
}

// replan replaces the plan's edges with ones the schedule orders (see
// ordered) and derives the barriers and the waits on the previous run
// from them again, keeping the order, queues and segments.
func (p *plan) replan(edges, wrap []edge, accs [][]access) {
	p.edges, p.wrap = edges, wrap
	for _, seg := range p.segs {
		seg.groups, seg.bars, seg.prev = nil, nil, nil
	}
	p.crossRun()
	p.barriers(accs)
}

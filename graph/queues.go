package graph

import (
	"github.com/vkflow/vkflow/internal/core"
)

// cost estimates a node's work in invocations.
func cost(n *node) uint64 {
	switch n.kind {
	case KindDispatch:
		l := n.algo.LocalSize()
		return nodeCost + uint64(n.groups[0])*uint64(n.groups[1])*uint64(n.groups[2])*uint64(l[0])*uint64(l[1])*uint64(l[2])
	case KindOpaque:
		return opaqueCost
	case KindCopy:
		var b uint64
		for _, r := range n.regions {
			b += r.Size
		}
		return nodeCost + b/4
	}
	return nodeCost + n.tensors[0].Bytes()/4
}

// assign puts each node on a queue slot: a pinned node on its queue, a
// node smaller than a hand-off on its latest predecessor's queue (a source
// on the first queue that can run it), the others by earliest estimated
// finish (list scheduling). A resource (a physical queue under
// PlaceByCost, a slot under PlaceSpread: model) is free when its last node
// ends; a node starts when its predecessors have ended, plus the hand-off
// from each on another slot. Ties go to the queue of the latest
// predecessor, then, for transfers, to a transfer queue of its own, then
// to the lowest slot. Dispatches and opaque nodes never go to a transfer
// queue. Under PlaceOneQueue every node that is not pinned goes to the
// first queue that can run it.
func (p *plan) assign(nodes []node, preds [][]int, infos []core.QueueInfo, slotOfQueue map[int]int) error {
	m := p.model(infos)
	p.slotOf = make([]int, len(nodes))
	p.cost = make([]uint64, len(nodes))
	nres := 0
	for _, r := range m.res {
		nres = max(nres, r+1)
	}
	free := make([]uint64, nres)
	finish := make([]uint64, len(nodes))
	compute := false
	computeRes := map[int]bool{}
	for s, q := range p.slots {
		if !infos[q].Transfer {
			compute = true
			computeRes[m.res[s]] = true
		}
	}
	small := min(m.sameRes, m.cross)
	if small == 0 {
		small = max(m.sameRes, m.cross)
	}
	for _, i := range p.order {
		n := &nodes[i]
		gpu := n.kind == KindDispatch || n.kind == KindOpaque
		if gpu && !compute {
			return core.Invalid("node %s needs a compute queue and the graph may use only transfer queues %v", n.label(i), p.slots)
		}
		c := cost(n)
		p.cost[i] = c
		place := func(s int) {
			p.slotOf[i] = s
			finish[i] = p.start(i, s, preds, free, finish, m) + c
			free[m.res[s]] = finish[i]
		}
		if n.queue >= 0 {
			s, ok := slotOfQueue[n.queue]
			if !ok {
				return core.Invalid("node %s is pinned to queue %d, which Compile may not use (Queues %v)", n.label(i), n.queue, p.slots)
			}
			if gpu && infos[n.queue].Transfer {
				return core.Invalid("node %s needs a compute queue; queue %d is the transfer queue", n.label(i), n.queue)
			}
			place(s)
			continue
		}
		if p.place == PlaceOneQueue {
			place(p.smallSlot(-1, compute, infos))
			continue
		}
		latest := -1
		for _, q := range preds[i] {
			if latest < 0 || finish[q] > finish[latest] {
				latest = q
			}
		}
		if c < small {
			// A small node is not worth a hand-off: it follows its latest
			// predecessor, or a small source goes to the first queue
			// that can run it.
			if s := p.smallSlot(latest, gpu, infos); s >= 0 {
				place(s)
				continue
			}
		}
		best, bestEnd, bestRank := -1, uint64(0), 0
		for s, q := range p.slots {
			if gpu && infos[q].Transfer {
				continue
			}
			end := p.start(i, s, preds, free, finish, m) + c
			rank := 3
			switch {
			case latest >= 0 && p.slotOf[latest] == s:
				rank = 0
			case !gpu && infos[q].Transfer && !computeRes[m.res[s]]:
				rank = 1
			}
			if best < 0 || end < bestEnd || end == bestEnd && rank < bestRank {
				best, bestEnd, bestRank = s, end, rank
			}
		}
		p.slotOf[i] = best
		finish[i] = bestEnd
		free[m.res[best]] = bestEnd
	}
	return nil
}

// smallSlot is where a small node goes: its latest predecessor's queue,
// or for a source the first queue that can run it; -1 if neither fits.
func (p *plan) smallSlot(latest int, gpu bool, infos []core.QueueInfo) int {
	if latest >= 0 {
		s := p.slotOf[latest]
		if !gpu || !infos[p.slots[s]].Transfer {
			return s
		}
	}
	for s, q := range p.slots {
		if !gpu || !infos[q].Transfer {
			return s
		}
	}
	return -1
}

func (p *plan) start(i, s int, preds [][]int, free, finish []uint64, m model) uint64 {
	t := free[m.res[s]]
	for _, q := range preds[i] {
		t = max(t, finish[q]+m.hand(p.slotOf[q], s))
	}
	return t
}

package graph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/record"
	"github.com/vkflow/vkflow/vk"
)

// Option configures Compile.
type Option func(*options) error

type options struct {
	queues   []int
	maxNodes int
	maxWork  uint64
}

// Defaults of the per-submit caps.
const (
	DefaultMaxNodesPerSubmit = 1024
	DefaultMaxWorkPerSubmit  = 1 << 30
)

// Work estimates, in invocations: a dispatch costs its invocations, a
// transfer one per 4 bytes, and every node nodeCost more (launching a
// small dispatch costs about as much as a few thousand invocations); an
// opaque node costs opaqueCost, and depending on a node of another queue
// waitCost (a semaphore wait and a new submit). So small nodes stay with
// their predecessors and only real work spreads over queues.
const (
	nodeCost   = 1 << 12
	opaqueCost = 1 << 13
	waitCost   = 1 << 14
)

// Queues restricts the logical queues the graph may use (default: all of
// the Manager's). Nodes pinned with OnQueue must use one of them.
func Queues(qs ...int) Option {
	return func(o *options) error {
		if len(qs) == 0 {
			return core.Invalid("Queues: no queue given")
		}
		o.queues = append([]int(nil), qs...)
		return nil
	}
}

// MaxNodesPerSubmit caps the nodes in one command buffer (default 1024),
// so that a long graph reaches the GPU in pieces: the first starts while
// the rest are submitted, and no one submit runs long enough to trip a
// driver watchdog.
func MaxNodesPerSubmit(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return core.Invalid("MaxNodesPerSubmit(%d): must be at least 1", n)
		}
		o.maxNodes = n
		return nil
	}
}

// MaxWorkPerSubmit caps the estimated work in one command buffer, in
// shader invocations (a transfer counts one per 4 bytes); default 2^30. A
// node larger than the cap gets a submit of its own.
func MaxWorkPerSubmit(w uint64) Option {
	return func(o *options) error {
		if w < 1 {
			return core.Invalid("MaxWorkPerSubmit(0)")
		}
		o.maxWork = w
		return nil
	}
}

// segRef names segment k of queue slot q.
type segRef struct{ q, k int }

// barrier is one vkCmdPipelineBarrier: buffer barriers, or a global
// memory barrier for After edges.
type barrier struct {
	src, dst uint32
	bufs     []vk.BufferBarrier
	global   bool
}

// segment is one command buffer: consecutive nodes of one queue, in
// groups of independent nodes with a barrier before each group.
type segment struct {
	id     int // index in plan.segs: submission order
	q, k   int // queue slot, index on it
	nodes  []int
	groups []int     // start of each group in nodes
	bars   []barrier // before each group
	waits  []segRef
	prev   []segRef // segments of the previous run it waits for
	clock  []int    // per slot: segments known complete when it starts
	work   uint64
	pos    int // topological position of its first node
}

// plan is a compiled graph, before any Vulkan object exists.
type plan struct {
	slots    []int // logical queue of each slot
	order    []int // topological order
	level    []int
	slotOf   []int
	segOf    []int // segment (index in segs) of each node
	segs     []*segment
	bySlot   [][]int // per slot: indexes into segs, in order
	edges    []edge
	wrap     []edge // from a run's node to the next run's
	warnings []string
}

// dropEdge, when set by a test, removes that inferred edge: the mutation
// check that a missing edge draws a synchronization hazard.
var dropEdge = -1

// compilePlan analyses nodes: dependencies, order, queues, segments,
// waits and barriers. It touches no Vulkan object.
func compilePlan(nodes []node, accs [][]access, infos []core.QueueInfo, o options, inputs map[vk.Buffer]bool) (*plan, error) {
	// A tensor the host wrote, or GPU work wrote, holds data.
	for _, n := range nodes {
		for _, t := range n.tensors {
			if t.Allocation().Written() {
				inputs[t.Allocation().Buffer] = true
			}
		}
	}
	p := &plan{slots: o.queues}
	slotOfQueue := map[int]int{}
	for s, q := range p.slots {
		if q < 0 || q >= len(infos) {
			return nil, core.Invalid("Queues: logical queue %d out of range (the Manager has %d)", q, len(infos))
		}
		if _, dup := slotOfQueue[q]; dup {
			return nil, core.Invalid("Queues: logical queue %d given twice", q)
		}
		slotOfQueue[q] = s
	}
	edges, wrap, uninit := infer(accs)
	if dropEdge >= 0 && dropEdge < len(edges) {
		edges = slices.Delete(edges, dropEdge, dropEdge+1)
	}
	for i, n := range nodes {
		for _, a := range n.after {
			edges = append(edges, edge{from: a, to: i, kind: hazOrder})
		}
	}
	p.edges = edges
	p.wrap = wrap
	for buf, ns := range uninit {
		if inputs[buf] {
			continue
		}
		n := ns[0]
		p.warnings = append(p.warnings, fmt.Sprintf("node %s reads a tensor that nothing wrote: no node before it, no host write, no earlier GPU work (declare it with Input if it is filled another way)", nodes[n].label(n)))
	}
	slices.Sort(p.warnings)

	preds := make([][]int, len(nodes))
	succs := make([][]int, len(nodes))
	for _, e := range edges {
		if k := len(preds[e.to]); k > 0 && preds[e.to][k-1] == e.from {
			continue // consecutive duplicates are common: one pair, several buffers
		}
		preds[e.to] = append(preds[e.to], e.from)
		succs[e.from] = append(succs[e.from], e.to)
	}
	if err := p.topo(nodes, preds, succs); err != nil {
		return nil, err
	}
	if err := p.assign(nodes, preds, infos, slotOfQueue); err != nil {
		return nil, err
	}
	p.segment(nodes, preds, succs, o)
	p.crossRun()
	p.barriers(accs)
	return p, nil
}

// topo orders the nodes: Kahn's algorithm taking the ready node recorded
// first, so that a graph without cross dependencies keeps its recording
// order; level is the longest path from a source.
func (p *plan) topo(nodes []node, preds, succs [][]int) error {
	n := len(nodes)
	indeg := make([]int, n)
	for i := range nodes {
		indeg[i] = len(preds[i])
	}
	var ready intHeap
	for i := range n {
		if indeg[i] == 0 {
			ready.push(i)
		}
	}
	p.order = make([]int, 0, n)
	p.level = make([]int, n)
	for ready.len() > 0 {
		i := ready.pop()
		p.order = append(p.order, i)
		for _, s := range succs[i] {
			p.level[s] = max(p.level[s], p.level[i]+1)
			if indeg[s]--; indeg[s] == 0 {
				ready.push(s)
			}
		}
	}
	if len(p.order) < n {
		return core.Invalid("graph has a cycle: %s", cycle(nodes, preds, indeg))
	}
	return nil
}

// cycle names one cycle among the nodes left with predecessors.
func cycle(nodes []node, preds [][]int, indeg []int) string {
	start := -1
	for i, d := range indeg {
		if d > 0 {
			start = i
			break
		}
	}
	// Walk predecessors that are still blocked until a node repeats.
	seen := map[int]int{}
	var path []int
	for at := start; ; {
		if k, ok := seen[at]; ok {
			path = path[k:]
			break
		}
		seen[at] = len(path)
		path = append(path, at)
		for _, q := range preds[at] {
			if indeg[q] > 0 {
				at = q
				break
			}
		}
	}
	slices.Reverse(path)
	var b strings.Builder
	for _, i := range path {
		fmt.Fprintf(&b, "%s -> ", nodes[i].label(i))
	}
	b.WriteString(nodes[path[0]].label(path[0]))
	return b.String()
}

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
// node smaller than a wait on its latest predecessor's queue (a source on
// the first queue that can run it), the others by earliest estimated
// finish (list scheduling): a queue is free
// when its last node ends, a node starts when its predecessors have ended,
// plus waitCost for each on another queue. Ties go to the queue of the
// latest predecessor, then, for transfers, to a transfer queue, then to
// the lowest slot. Dispatches and opaque nodes never go to a transfer
// queue.
func (p *plan) assign(nodes []node, preds [][]int, infos []core.QueueInfo, slotOfQueue map[int]int) error {
	p.slotOf = make([]int, len(nodes))
	free := make([]uint64, len(p.slots))
	finish := make([]uint64, len(nodes))
	compute := false
	for _, q := range p.slots {
		compute = compute || !infos[q].Transfer
	}
	for _, i := range p.order {
		n := &nodes[i]
		gpu := n.kind == KindDispatch || n.kind == KindOpaque
		if gpu && !compute {
			return core.Invalid("node %s needs a compute queue and the graph may use only transfer queues %v", n.label(i), p.slots)
		}
		c := cost(n)
		if n.queue >= 0 {
			s, ok := slotOfQueue[n.queue]
			if !ok {
				return core.Invalid("node %s is pinned to queue %d, which Compile may not use (Queues %v)", n.label(i), n.queue, p.slots)
			}
			if gpu && infos[n.queue].Transfer {
				return core.Invalid("node %s needs a compute queue; queue %d is the transfer queue", n.label(i), n.queue)
			}
			p.slotOf[i] = s
			finish[i] = p.start(i, s, preds, free, finish) + c
			free[s] = finish[i]
			continue
		}
		latest := -1
		for _, q := range preds[i] {
			if latest < 0 || finish[q] > finish[latest] {
				latest = q
			}
		}
		if c < waitCost {
			// A small node is not worth a wait: it follows its latest
			// predecessor, or a small source goes to the first queue
			// that can run it.
			if s := p.smallSlot(latest, gpu, infos); s >= 0 {
				p.slotOf[i] = s
				finish[i] = p.start(i, s, preds, free, finish) + c
				free[s] = finish[i]
				continue
			}
		}
		best, bestEnd, bestRank := -1, uint64(0), 0
		for s, q := range p.slots {
			if gpu && infos[q].Transfer {
				continue
			}
			end := p.start(i, s, preds, free, finish) + c
			rank := 3
			switch {
			case latest >= 0 && p.slotOf[latest] == s:
				rank = 0
			case !gpu && infos[q].Transfer:
				rank = 1
			}
			if best < 0 || end < bestEnd || end == bestEnd && rank < bestRank {
				best, bestEnd, bestRank = s, end, rank
			}
		}
		p.slotOf[i] = best
		finish[i] = bestEnd
		free[best] = bestEnd
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

func (p *plan) start(i, s int, preds [][]int, free, finish []uint64) uint64 {
	t := free[s]
	for _, q := range preds[i] {
		at := finish[q]
		if p.slotOf[q] != s {
			at += waitCost
		}
		t = max(t, at)
	}
	return t
}

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

// accessesOf lists what node n reads and writes of the tensors' buffers,
// merging accesses of one node to the same range.
func accessesOf(n *node) []access {
	var as []access
	add := func(a access) {
		for k := range as {
			if as[k].buf == a.buf && as[k].lo == a.lo && as[k].hi == a.hi {
				as[k].stage |= a.stage
				as[k].mask |= a.mask
				return
			}
		}
		as = append(as, a)
	}
	switch n.kind {
	case KindDispatch:
		// A descriptor binds the tensor's bytes.
		for k, t := range n.tensors {
			add(access{buf: t.Allocation().Buffer, hi: max(t.Bytes(), 1), stage: vk.StageComputeShader, mask: record.BindingAccess(n.algo, k)})
		}
	case KindCopy:
		src, dst := n.tensors[0].Allocation().Buffer, n.tensors[1].Allocation().Buffer
		for _, r := range n.regions {
			add(access{buf: src, lo: r.SrcOffset, hi: r.SrcOffset + r.Size, stage: vk.StageTransfer, mask: vk.AccessTransferRead})
			add(access{buf: dst, lo: r.DstOffset, hi: r.DstOffset + r.Size, stage: vk.StageTransfer, mask: vk.AccessTransferWrite})
		}
	case KindFill:
		// A fill may write the tensor's own padding up to a word.
		t := n.tensors[0]
		add(access{buf: t.Allocation().Buffer, hi: max(t.Bytes(), n.fill.Size, 1), stage: vk.StageTransfer, mask: vk.AccessTransferWrite})
	case KindUpload:
		t := n.tensors[0]
		add(access{buf: t.Allocation().Buffer, hi: max(t.Bytes(), 1), stage: vk.StageTransfer, mask: vk.AccessTransferWrite})
	case KindDownload:
		t := n.tensors[0]
		add(access{buf: t.Allocation().Buffer, hi: max(t.Bytes(), 1), stage: vk.StageTransfer, mask: vk.AccessTransferRead})
	case KindOpaque:
		// Declared accesses cover whole buffers.
		for k, t := range n.tensors {
			mask := uint32(vk.AccessMemoryRead)
			if k >= n.reads {
				mask = vk.AccessMemoryWrite
			}
			add(access{buf: t.Allocation().Buffer, hi: t.Allocation().Size, stage: vk.StageAllCommands, mask: mask})
		}
	}
	return as
}

// conflicts reports a dispatch that binds overlapping bytes of one buffer
// to two bindings that both write: two writers of one tensor in one
// dispatch race with each other.
func conflicts(n *node) error {
	if n.kind != KindDispatch {
		return nil
	}
	for i, a := range n.tensors {
		for j := i + 1; j < len(n.tensors); j++ {
			b := n.tensors[j]
			if a.Allocation().Buffer == b.Allocation().Buffer && writes(n.algo, i) && writes(n.algo, j) {
				return core.Invalid("bindings %d and %d write the same tensor %v: two writers in one dispatch race", i, j, a)
			}
		}
	}
	return nil
}

func writes(a *algorithm.Algorithm, i int) bool { return a.Access(i) != algorithm.ReadOnly }

// intHeap is a min-heap of node indexes.
type intHeap []int

func (h *intHeap) len() int { return len(*h) }

func (h *intHeap) push(v int) {
	*h = append(*h, v)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *intHeap) pop() int {
	s := *h
	v := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l] < s[m] {
			m = l
		}
		if r < len(s) && s[r] < s[m] {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return v
}

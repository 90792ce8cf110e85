package graph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/minheap"
	"github.com/vkflow/vkflow/vk"
)

// Option configures Compile.
type Option func(*options) error

type options struct {
	queues   []int
	maxNodes int
	maxWork  uint64
	place    Placement
	costs    *core.Costs // injected (WithCosts), or the device's
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
	place    Placement
	costs    *core.Costs // what PlaceByCost decided with; nil otherwise
	cost     []uint64    // estimated work of each node, in invocations
	order    []int       // topological order
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
	p := &plan{slots: o.queues, place: o.place}
	if o.place == PlaceByCost {
		p.costs = o.costs
	}
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
	var ready []int
	for i := range n {
		if indeg[i] == 0 {
			ready = minheap.Push(ready, i, less)
		}
	}
	p.order = make([]int, 0, n)
	p.level = make([]int, n)
	for len(ready) > 0 {
		var i int
		ready, i = minheap.Pop(ready, less)
		p.order = append(p.order, i)
		for _, s := range succs[i] {
			p.level[s] = max(p.level[s], p.level[i]+1)
			if indeg[s]--; indeg[s] == 0 {
				ready = minheap.Push(ready, s, less)
			}
		}
	}
	if len(p.order) < n {
		return core.Invalid("graph has a cycle: %s", cycle(nodes, preds, indeg))
	}
	return nil
}

func less(a, b int) bool { return a < b }

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

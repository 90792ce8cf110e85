package graph

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/vk"
)

// String describes the schedule: the placement (how nodes were put on
// queues, the costs it decided with and the estimated work per queue),
// then per submit, in submission order, its queue, the waits on other
// queues, and its nodes in groups with the barrier before each group.
func (e *Exec) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.plan
	var b strings.Builder
	names := e.tensorNames()
	fmt.Fprintf(&b, "graph: %d nodes, %d edges, %d submits on queues %v\n", len(e.nodes), len(p.edges), len(p.segs), p.slots)
	b.WriteString(p.describePlacement() + "\n")
	for _, seg := range p.segs {
		fmt.Fprintf(&b, "submit %d: queue %d #%d", seg.id, p.slots[seg.q], seg.k)
		for _, w := range seg.waits {
			fmt.Fprintf(&b, ", waits queue %d #%d", p.slots[w.q], w.k)
		}
		for _, w := range seg.prev {
			fmt.Fprintf(&b, ", waits the previous run's queue %d #%d", p.slots[w.q], w.k)
		}
		b.WriteString("\n")
		for gi, start := range seg.groups {
			end := len(seg.nodes)
			if gi+1 < len(seg.groups) {
				end = seg.groups[gi+1]
			}
			if bar := seg.bars[gi]; len(bar.bufs) > 0 || bar.global {
				fmt.Fprintf(&b, "  barrier %s\n", describe(bar, names))
			}
			b.WriteString("  ")
			for k, i := range seg.nodes[start:end] {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(e.nodes[i].label(i))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// describe names a barrier's buffers by the tensors of the graph.
func describe(bar barrier, names map[vk.Buffer]string) string {
	var parts []string
	if bar.global {
		parts = append(parts, "memory")
	}
	for _, bb := range bar.bufs {
		parts = append(parts, fmt.Sprintf("%s[%d:%d]", names[bb.Buffer], bb.Offset, bb.Offset+bb.Size))
	}
	return strings.Join(parts, " ")
}

// tensorNames names each buffer t0, t1, ... in order of first use, with
// the tensor's dtype and shape.
func (e *Exec) tensorNames() map[vk.Buffer]string {
	names := map[vk.Buffer]string{}
	for _, n := range e.nodes {
		for _, t := range n.tensors {
			buf := t.Allocation().Buffer
			if _, ok := names[buf]; !ok {
				names[buf] = fmt.Sprintf("t%d(%v%v)", len(names), t.Dtype(), t.Shape())
			}
		}
	}
	return names
}

// DOT returns the graph in Graphviz's language: the placement line of
// String as the graph's label, one cluster per submit (labelled with its
// queue), nodes labelled with index, kind and name ("0 fill init"; index
// and kind for an unnamed node) over their estimated work, solid
// edges for dependencies inside a submit (barriers), dashed edges for
// dependencies ordered between submits (the queue's order or a wait), and
// bold red edges for the waits between queues.
func (e *Exec) DOT() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.plan
	var b strings.Builder
	b.WriteString("digraph vkflow {\n  rankdir=TB;\n  node [shape=box];\n")
	fmt.Fprintf(&b, "  labelloc=t;\n  label=%q;\n", p.describePlacement())
	for _, seg := range p.segs {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=\"submit %d: queue %d #%d\";\n", seg.id, seg.id, p.slots[seg.q], seg.k)
		for _, i := range seg.nodes {
			fmt.Fprintf(&b, "    n%d [label=%q];\n", i, e.nodes[i].fullLabel(i)+"\nest. "+p.fmtWork(p.cost[i]))
		}
		b.WriteString("  }\n")
	}
	type pair struct{ from, to int }
	seen := map[pair]bool{}
	for _, ed := range p.edges {
		k := pair{ed.from, ed.to}
		if seen[k] {
			continue
		}
		seen[k] = true
		style := "solid"
		if p.segOf[ed.from] != p.segOf[ed.to] {
			style = "dashed"
		}
		fmt.Fprintf(&b, "  n%d -> n%d [label=%q, style=%s];\n", ed.from, ed.to, hazNames[ed.kind], style)
	}
	for _, seg := range p.segs {
		for _, w := range seg.waits {
			from := p.segs[p.bySlot[w.q][w.k]]
			fmt.Fprintf(&b, "  n%d -> n%d [label=\"wait\", color=red, style=bold, ltail=cluster_%d, lhead=cluster_%d];\n",
				from.nodes[len(from.nodes)-1], seg.nodes[0], from.id, seg.id)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

package graph

import (
	"fmt"
	"math"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/record"
	"github.com/vkflow/vkflow/tensor"
)

// Rebind replaces tensor old with new in every node that names old,
// keeping the schedule: new must have old's dtype and byte size, belong to
// the same Manager and touch no memory the graph touches already, through
// any handle (a view of one of its tensors, of old included, would change
// its dependencies: compile again). Dependencies follow memory, not
// handles: nodes on another handle of old's buffer (a kDLVulkan or host
// view imported through dlpack) keep old's buffer and their order among
// themselves; the barriers and cross-run waits are derived again from what
// each node now touches. The command buffers are recorded again at the
// next run. No run may be in flight (ErrPending).
func (e *Exec) Rebind(old, new *tensor.Tensor) error {
	if old == nil || new == nil {
		return core.Invalid("graph: Rebind: nil tensor")
	}
	if err := e.dev.Enter(); err != nil {
		return err
	}
	defer e.dev.Exit()
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.editable("Rebind"); err != nil {
		return err
	}
	if new.Closed() {
		return core.Closed("graph: Rebind: new tensor")
	}
	if new.Object().Device() != e.dev {
		return core.Invalid("graph: Rebind: the new tensor belongs to another Manager")
	}
	if old.Dtype() != new.Dtype() || old.Bytes() != new.Bytes() {
		return core.Invalid("graph: Rebind: %v has %v × %d, %v has %v × %d: dtype and size must match", old, old.Dtype(), old.Len(), new, new.Dtype(), new.Len())
	}
	nb := new.Allocation().Buffer
	used := false
	for i := range e.nodes {
		n := &e.nodes[i]
		for _, t := range n.tensors {
			switch {
			case t.Allocation().Buffer == nb:
				return core.Invalid("graph: Rebind: the new tensor's buffer is already used by node %s (compile again to change dependencies)", n.label(i))
			case t == old && n.kind == KindOpaque:
				return core.Invalid("graph: Rebind: node %s is opaque: its commands name the old tensor", n.label(i))
			case t == old && n.kind == KindDispatch && new.ReadOnly() && writes(n.algo, slot(n.tensors, t)):
				return core.Invalid("graph: Rebind: node %s writes the tensor and the new one is read-only", n.label(i))
			case t == old && n.kind == KindFill:
				if p, err := record.PlanFill(new, fillValue(n)); err != nil || p != n.fill {
					return core.Invalid("graph: Rebind: node %s fills the tensor, and the new one's padding differs", n.label(i))
				}
			}
			used = used || t == old
		}
	}
	if !used {
		return core.Invalid("graph: Rebind: %v is not used by the graph", old)
	}
	nodes := make([]node, len(e.nodes))
	for i, n := range e.nodes {
		n.tensors = append([]*tensor.Tensor(nil), n.tensors...)
		for k, t := range n.tensors {
			if t == old {
				n.tensors[k] = new
			}
		}
		nodes[i] = n
	}
	// The edges follow the memory each node touches, not the handle: a
	// view of the old tensor's buffer (another handle) keeps it, and its
	// nodes keep their order among themselves but lose the one with the
	// rebound nodes. So the plan's edges, barriers and cross-run waits
	// are derived again from the new accesses, on the kept schedule.
	accs := make([][]access, len(nodes))
	for i := range nodes {
		accs[i] = accessesOf(&nodes[i])
	}
	edges, wrap, _ := infer(accs)
	for i, n := range nodes {
		for _, a := range n.after {
			edges = append(edges, edge{from: a, to: i, kind: hazOrder})
		}
	}
	if err := e.plan.ordered(edges); err != nil {
		return fmt.Errorf("graph: Rebind: %w (compile again to change dependencies)", err)
	}
	if !new.Object().TryAcquire() {
		return core.Closed("graph: Rebind: new tensor")
	}
	e.nodes = nodes
	e.plan.replan(edges, wrap, accs)
	for k, o := range e.held {
		if o == old.Object() {
			e.held[k] = new.Object()
			// The old tensor may still be in use by a completed run
			// only: its last use is marked, so releasing is safe.
			o.Release()
			break
		}
	}
	e.dirty = true
	return nil
}

func slot(ts []*tensor.Tensor, t *tensor.Tensor) int {
	for i, x := range ts {
		if x == t {
			return i
		}
	}
	return 0
}

// fillValue returns a value of a fill node's dtype whose word is the
// node's, for re-planning the fill of a rebound tensor.
func fillValue(n *node) any {
	w := n.fill.Word
	switch n.tensors[0].Dtype() {
	case tensor.Float16:
		return tensor.Half(w)
	case tensor.Float32:
		return math.Float32frombits(w)
	case tensor.Float64:
		return math.Float64frombits(uint64(w) | uint64(w)<<32)
	case tensor.Int8:
		return int8(w)
	case tensor.Int16:
		return int16(w)
	case tensor.Int32:
		return int32(w)
	case tensor.Int64:
		return int64(uint64(w) | uint64(w)<<32)
	case tensor.Uint8:
		return uint8(w)
	case tensor.Uint16:
		return uint16(w)
	case tensor.Uint32:
		return w
	case tensor.Uint64:
		return uint64(w) | uint64(w)<<32
	case tensor.Bool:
		return w != 0
	}
	return nil
}

// SetPush changes the push constants of dispatch node n, a node of the
// graph the Exec was compiled from (the zero Node, a node of another graph
// or one recorded after Compile is ErrInvalid); the command buffers are
// recorded again at the next run. No run may be in flight (ErrPending).
func (e *Exec) SetPush(n Node, push ...any) error {
	if err := e.dev.Enter(); err != nil {
		return err
	}
	defer e.dev.Exit()
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.editable("SetPush"); err != nil {
		return err
	}
	if err := e.owns("SetPush", n); err != nil {
		return err
	}
	if e.nodes[n.i].kind != KindDispatch {
		return core.Invalid("graph: SetPush: node %s is not a dispatch", e.nodes[n.i].label(n.i))
	}
	nd := &e.nodes[n.i]
	data, err := algorithm.Push(push...)
	if err != nil {
		return fmt.Errorf("graph: SetPush: %w", err)
	}
	if len(data) != len(nd.push) {
		return core.Invalid("graph: SetPush: push constants are %d bytes, the pipeline's are %d", len(data), len(nd.push))
	}
	nd.push = data
	e.dirty = true
	return nil
}

// owns checks that n is one of the Exec's nodes: a node of the graph it
// was compiled from, recorded before Compile. The zero Node and a node of
// another graph are refused whatever their index.
func (e *Exec) owns(what string, n Node) error {
	switch {
	case n.g == nil:
		return core.Invalid("graph: %s: the zero Node is not a node of any graph", what)
	case n.g.id != e.graph:
		return core.Invalid("graph: %s: node %d is a node of another graph", what, n.i)
	case n.i < 0 || n.i >= len(e.nodes):
		return core.Invalid("graph: %s: node %d was recorded after Compile (the Exec has nodes 0..%d)", what, n.i, len(e.nodes)-1)
	}
	return nil
}

// editable checks that the Exec may be changed. Called with mu held.
func (e *Exec) editable(what string) error {
	if e.closed || e.obj.Closed() {
		return core.Closed("graph Exec")
	}
	if e.inflight.Load() > 0 || e.pending != nil && !e.pending.done() {
		return fmt.Errorf("graph: %s: %w (wait for the last run first)", what, core.ErrPending)
	}
	return nil
}

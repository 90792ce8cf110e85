package graph

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/record"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// Exec is a compiled graph: one command buffer per segment, recorded once
// and replayed by every run, and one timeline per queue it uses.
//
// Ownership: the Manager owns every Exec and closes it with the sequences.
// An Exec holds a reference on each tensor and algorithm its nodes use,
// its command buffers, descriptor sets, staging buffers and timelines,
// until Close and the GPU's completion of its last run.
type Exec struct {
	obj   core.Object
	dev   *core.Device
	graph uint64 // the graph's identity: SetPush takes its Nodes only
	nodes []node
	plan  *plan

	queues []*core.Queue        // per slot: the physical queue
	tls    []*timeline.Timeline // per slot
	pools  map[uint32]vk.CommandPool
	cmds   []vk.CommandBuffer       // per segment
	hz     []*core.Hazards          // per segment
	objs   [][]*core.Object         // per segment: what its commands use
	held   []*core.Object           // one reference on each tensor and algorithm
	sets   map[string]boundSet      // by algorithm and bound buffers: dispatches of one binding share a set
	stage  map[int]*core.Allocation // upload/download staging, by node
	pats   map[uint32]*core.Allocation

	mu       sync.Mutex
	closed   bool
	dirty    bool         // a Rebind or SetPush since the last recording
	next     []uint64     // per slot: last value assigned on its timeline
	last     []uint64     // per slot: value of the last accepted submit
	prevVals []uint64     // per segment: its value in the last run
	inflight atomic.Int64 // submits the scheduler has not released
	host     bool         // the graph has uploads or downloads
	pending  *run         // the last run
}

// Compile analyses the graph (see the package doc) and records its command
// buffers. A recording error, a cycle, a node on a closed tensor or
// algorithm, a dispatch whose bindings write one tensor twice, or a node
// pinned to a queue it may not use is an error here. Reads of tensors
// nothing writes are reported by Warnings and logged.
func (g *Graph) Compile(opts ...Option) (*Exec, error) {
	d := g.dev
	if err := d.Enter(); err != nil {
		return nil, err
	}
	defer d.Exit()
	if d.Tracing() {
		defer d.Span("graph compile", time.Now(), map[string]any{"nodes": len(g.nodes)})
	}
	o := options{maxNodes: DefaultMaxNodesPerSubmit, maxWork: DefaultMaxWorkPerSubmit}
	for _, f := range opts {
		if f == nil {
			continue
		}
		if err := f(&o); err != nil {
			return nil, fmt.Errorf("graph: %w", err)
		}
	}
	infos := d.Queues()
	if o.queues == nil {
		for i := range infos {
			o.queues = append(o.queues, i)
		}
	}
	costs, err := costsFor(d, o, infos)
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	o.costs = costs
	g.mu.Lock()
	if g.err != nil {
		g.mu.Unlock()
		return nil, g.err
	}
	nodes := make([]node, len(g.nodes))
	for i, n := range g.nodes {
		n.tensors = append([]*tensor.Tensor(nil), n.tensors...)
		n.after = append([]int(nil), n.after...)
		nodes[i] = n
	}
	inputs := make(map[vk.Buffer]bool, len(g.inputs))
	for b := range g.inputs {
		inputs[b] = true
	}
	g.mu.Unlock()
	if len(nodes) == 0 {
		return nil, core.Invalid("graph: Compile: the graph has no nodes")
	}

	e := &Exec{dev: d, graph: g.id, nodes: nodes, pools: map[uint32]vk.CommandPool{}, sets: map[string]boundSet{},
		stage: map[int]*core.Allocation{}, pats: map[uint32]*core.Allocation{}}
	if err := e.hold(); err != nil {
		return nil, err
	}
	accs := make([][]access, len(nodes))
	for i := range nodes {
		if err := conflicts(&nodes[i]); err != nil {
			e.unhold()
			return nil, fmt.Errorf("graph: node %s: %w", nodes[i].label(i), err)
		}
		accs[i] = accessesOf(&nodes[i])
		e.host = e.host || nodes[i].kind == KindUpload || nodes[i].kind == KindDownload
	}
	p, err := compilePlan(nodes, accs, infos, o, inputs)
	if err != nil {
		e.unhold()
		return nil, fmt.Errorf("graph: %w", err)
	}
	e.plan = p
	for _, w := range p.warnings {
		d.Log.Warn("vkflow: graph: "+w, slog.Int("nodes", len(nodes)))
	}
	if err := e.create(); err != nil {
		e.free()
		e.unhold()
		return nil, fmt.Errorf("graph: %w", d.Check(err))
	}
	if err := e.obj.Init(d, core.KindSequence, e.destroy, nil); err != nil {
		e.free()
		e.unhold()
		return nil, err
	}
	// What the graph writes holds data for later graphs' warnings.
	for i, n := range nodes {
		for _, t := range n.tensors {
			for _, a := range accs[i] {
				if a.writes() && a.buf == t.Allocation().Buffer {
					t.Allocation().MarkWritten()
				}
			}
		}
	}
	return e, nil
}

// hold takes a reference on every tensor and algorithm of the nodes.
func (e *Exec) hold() error {
	seen := map[*core.Object]bool{}
	for i, n := range e.nodes {
		objs := make([]*core.Object, 0, len(n.tensors)+1)
		for _, t := range n.tensors {
			objs = append(objs, t.Object())
		}
		if n.algo != nil {
			objs = append(objs, n.algo.Object())
		}
		for _, o := range objs {
			if seen[o] {
				continue
			}
			if !o.TryAcquire() {
				e.unhold()
				return fmt.Errorf("graph: node %s uses a closed tensor or algorithm: %w", n.label(i), core.ErrClosed)
			}
			seen[o] = true
			e.held = append(e.held, o)
		}
	}
	return nil
}

func (e *Exec) unhold() {
	for _, o := range e.held {
		o.Release()
	}
	e.held = nil
}

// create makes the Vulkan objects: timelines, staging, command buffers.
func (e *Exec) create() error {
	d, p := e.dev, e.plan
	e.next = make([]uint64, len(p.slots))
	e.last = make([]uint64, len(p.slots))
	e.prevVals = make([]uint64, len(p.segs))
	for _, q := range p.slots {
		pq, err := d.Queue(q)
		if err != nil {
			return err
		}
		e.queues = append(e.queues, pq)
		tl, err := timeline.New(d, 0)
		if err != nil {
			return err
		}
		// A failed run fails the values it would have signalled, not every
		// later run (core.Timeline.SetRecoverable).
		tl.State().SetRecoverable()
		e.tls = append(e.tls, tl)
	}
	for i, n := range e.nodes {
		switch n.kind {
		case KindUpload, KindDownload:
			usage := uint32(vk.BufferUsageTransferSrc)
			if n.kind == KindDownload {
				usage = vk.BufferUsageTransferDst
			}
			a, err := d.Alloc(core.MemHost, max(n.tensors[0].Bytes(), 4), usage)
			if err != nil {
				return err
			}
			e.stage[i] = a
		case KindFill:
			if n.fill.Tail && e.pats[n.fill.Word] == nil {
				a, err := record.Pattern(d, n.fill.Word)
				if err != nil {
					return err
				}
				e.pats[n.fill.Word] = a
			}
		}
	}
	for _, seg := range p.segs {
		fam := e.queues[seg.q].Family
		pool, ok := e.pools[fam]
		if !ok {
			var err error
			if pool, err = d.VK.CreateCommandPool(fam, vk.CommandPoolResetBuffer); err != nil {
				return err
			}
			e.pools[fam] = pool
		}
		cmd, err := d.VK.AllocateCommandBuffer(pool)
		if err != nil {
			return err
		}
		e.cmds = append(e.cmds, cmd)
		e.hz = append(e.hz, d.NewHazards(e.queues[seg.q]))
	}
	return e.recordAll()
}

// free destroys what create made, for a Compile that failed or an Exec
// the GPU is done with.
func (e *Exec) free() {
	e.returnSets()
	for _, h := range e.hz {
		h.Destroy()
	}
	for _, pool := range e.pools {
		e.dev.VK.DestroyCommandPool(pool)
	}
	for _, a := range e.stage {
		e.dev.Free(a)
	}
	for _, a := range e.pats {
		e.dev.Free(a)
	}
	for _, tl := range e.tls {
		// Destroyed once the driver has retired its last batch (core's
		// idle rule for timelines).
		tl.Close()
	}
	e.hz, e.pools, e.stage, e.pats, e.tls = nil, nil, nil, nil, nil
}

// boundSet is a descriptor set of an algorithm.
type boundSet struct {
	algo *algorithm.Algorithm
	set  vk.DescriptorSet
}

func (e *Exec) returnSets() {
	for k, b := range e.sets {
		b.algo.ReturnBinding(b.set)
		delete(e.sets, k)
	}
}

// setFor returns the descriptor set binding n's tensors to its algorithm,
// shared by every dispatch of the same algorithm and buffers.
func (e *Exec) setFor(n *node) (vk.DescriptorSet, error) {
	key := make([]byte, 0, 8*(len(n.tensors)+1))
	key = binary.LittleEndian.AppendUint64(key, uint64(uintptr(unsafe.Pointer(n.algo))))
	for _, t := range n.tensors {
		key = binary.LittleEndian.AppendUint64(key, uint64(t.Allocation().Buffer))
	}
	if b, ok := e.sets[string(key)]; ok {
		return b.set, nil
	}
	set, err := n.algo.TakeBinding(n.tensors)
	if err != nil {
		return 0, err
	}
	e.sets[string(key)] = boundSet{n.algo, set}
	return set, nil
}

// recordAll records every segment's command buffer. No run may be pending.
func (e *Exec) recordAll() error {
	e.returnSets()
	for k := range e.plan.segs {
		if err := e.recordSegment(k); err != nil {
			return err
		}
	}
	e.dirty = false
	return nil
}

func (e *Exec) recordSegment(k int) error {
	seg, cmd := e.plan.segs[k], e.cmds[k]
	if err := vk.ResetCommandBuffer(cmd); err != nil {
		return err
	}
	if err := vk.BeginCommandBuffer(cmd, vk.CommandBufferSimultaneousUse); err != nil {
		return err
	}
	uses := map[vk.Buffer]int{}
	h := e.hz[k]
	h.Uses = h.Uses[:0]
	objs := []*core.Object{}
	seen := map[*core.Object]bool{}
	var bound record.Bound
	for gi, start := range seg.groups {
		end := len(seg.nodes)
		if gi+1 < len(seg.groups) {
			end = seg.groups[gi+1]
		}
		if b := seg.bars[gi]; core.InferBarriers && (len(b.bufs) > 0 || b.global) {
			var ms, md uint32
			if b.global {
				ms, md = vk.AccessMemoryWrite, vk.AccessMemoryRead|vk.AccessMemoryWrite
			}
			vk.CmdPipelineBarrier(cmd, b.src, b.dst, ms, md, b.bufs)
		}
		for _, i := range seg.nodes[start:end] {
			if err := e.recordNode(cmd, i, &bound); err != nil {
				return fmt.Errorf("node %s: %w", e.nodes[i].label(i), err)
			}
			for _, a := range accessesOf(&e.nodes[i]) {
				summarize(h, uses, a)
			}
			if a := e.stage[i]; a != nil {
				st := access{buf: a.Buffer, hi: a.Size, stage: vk.StageTransfer, mask: vk.AccessTransferRead}
				if e.nodes[i].kind == KindDownload {
					st.mask = vk.AccessTransferWrite
				}
				summarize(h, uses, st)
			}
			for _, t := range e.nodes[i].tensors {
				objs = addObj(objs, seen, t.Object())
			}
			if a := e.nodes[i].algo; a != nil {
				objs = addObj(objs, seen, a.Object())
			}
		}
	}
	var host []vk.BufferBarrier
	for _, i := range seg.nodes {
		if e.nodes[i].kind == KindDownload {
			a := e.stage[i]
			host = append(host, vk.BufferBarrier{Buffer: a.Buffer, Size: vk.WholeSize,
				SrcAccess: vk.AccessTransferWrite, DstAccess: vk.AccessHostRead,
				SrcFamily: vk.QueueFamilyIgnored, DstFamily: vk.QueueFamilyIgnored})
		}
	}
	if len(host) > 0 {
		vk.CmdPipelineBarrier(cmd, vk.StageTransfer, vk.StageHost, 0, 0, host)
	}
	if k < len(e.objs) {
		e.objs[k] = objs
	} else {
		e.objs = append(e.objs, objs)
	}
	return vk.EndCommandBuffer(cmd)
}

func addObj(objs []*core.Object, seen map[*core.Object]bool, o *core.Object) []*core.Object {
	if seen[o] {
		return objs
	}
	seen[o] = true
	return append(objs, o)
}

// summarize adds an access to the segment's per-buffer uses, from which
// each submit's prelude orders it after earlier submits on the queue.
func summarize(h *core.Hazards, idx map[vk.Buffer]int, a access) {
	k, ok := idx[a.buf]
	if !ok {
		k = len(h.Uses)
		idx[a.buf] = k
		h.Uses = append(h.Uses, core.BufferUse{Buffer: a.buf})
	}
	u := &h.Uses[k]
	u.Size = max(u.Size, a.hi)
	if w := a.mask & record.WriteAccess; w != 0 {
		u.WStages |= a.stage
		u.WAccess |= w
	}
	if r := a.mask &^ record.WriteAccess; r != 0 {
		u.RStages |= a.stage
		u.RAccess |= r
	}
}

func (e *Exec) recordNode(cmd vk.CommandBuffer, i int, bound *record.Bound) error {
	n := &e.nodes[i]
	switch n.kind {
	case KindDispatch:
		set, err := e.setFor(n)
		if err != nil {
			return err
		}
		return record.Dispatch(e.dev, cmd, n.algo, set, n.push, n.groups, bound)
	case KindCopy:
		vk.CmdCopyBuffer(cmd, n.tensors[0].Allocation().Buffer, n.tensors[1].Allocation().Buffer, n.regions)
	case KindFill:
		record.Fill(cmd, n.tensors[0], n.fill, e.pats[n.fill.Word])
	case KindUpload:
		if b := n.tensors[0].Bytes(); b > 0 {
			vk.CmdCopyBuffer(cmd, e.stage[i].Buffer, n.tensors[0].Allocation().Buffer, []vk.CopyRegion{{Size: b}})
		}
	case KindDownload:
		if b := n.tensors[0].Bytes(); b > 0 {
			vk.CmdCopyBuffer(cmd, n.tensors[0].Allocation().Buffer, e.stage[i].Buffer, []vk.CopyRegion{{Size: b}})
		}
	case KindOpaque:
		n.record(cmd)
		*bound = record.Bound{} // it may have bound anything
	}
	return nil
}

// Warnings returns what Compile noticed but accepted: reads of tensors
// that no node writes before them and that Input did not declare.
func (e *Exec) Warnings() []string { return append([]string(nil), e.plan.warnings...) }

// Close releases the Exec. Its command buffers, staging buffers, timelines
// and the references it holds are freed once the GPU has finished its
// last run. Idempotent.
func (e *Exec) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	already := e.closed
	e.closed = true
	e.mu.Unlock()
	if !already {
		e.obj.Close()
	}
	return nil
}

func (e *Exec) destroy() {
	e.mu.Lock()
	defer e.mu.Unlock()
	// Tensors first, then the descriptor sets, then the algorithms (the
	// order Sequence.destroy keeps, for the same reason).
	isAlgo := map[*core.Object]bool{}
	for _, n := range e.nodes {
		if n.algo != nil {
			isAlgo[n.algo.Object()] = true
		}
	}
	var algos []*core.Object
	for _, o := range e.held {
		if isAlgo[o] {
			algos = append(algos, o)
			continue
		}
		o.Release()
	}
	e.free()
	for _, o := range algos {
		o.Release()
	}
	e.held = nil
}

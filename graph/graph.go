package graph

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/record"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// Owner is what New takes: a *vkflow.Manager.
type Owner = core.Owner

// Graph records nodes; Compile turns them into an Exec. A Graph holds no
// Vulkan objects and no references: it only remembers what was recorded.
// It is safe for concurrent use.
type Graph struct {
	id     uint64 // identity that Nodes and Execs carry: never reused
	dev    *core.Device
	mu     sync.Mutex
	nodes  []node
	inputs map[vk.Buffer]bool
	err    error // first recording error, returned by Compile
}

// New returns an empty graph for the Manager's device.
func New(o Owner) (*Graph, error) {
	d, err := core.From(o)
	if err != nil {
		return nil, err
	}
	if d.Closed() {
		return nil, core.Closed("Manager")
	}
	return &Graph{id: graphIDs.Add(1), dev: d, inputs: map[vk.Buffer]bool{}}, nil
}

// graphIDs numbers graphs from 1, so that the zero Node belongs to none.
var graphIDs atomic.Uint64

// Kind is what a node does.
type Kind uint8

// Node kinds.
const (
	KindDispatch Kind = iota
	KindCopy
	KindFill
	KindUpload
	KindDownload
	KindOpaque
)

var kindNames = [...]string{"dispatch", "copy", "fill", "upload", "download", "opaque"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Node is a recorded node: an index into its graph and the graph's
// identity, with methods that set its options. The zero Node is not
// valid: its methods do nothing, and every call that takes a Node (After,
// Exec.SetPush) refuses it, and a node of another graph, with ErrInvalid.
type Node struct {
	g *Graph
	i int
}

// ID returns the node's index, in recording order.
func (n Node) ID() int { return n.i }

// node is one recorded operation. tensors lists what it touches: a
// dispatch's bindings, a copy's source and destination, the one tensor of
// a fill, upload or download, an opaque node's reads then writes.
type node struct {
	kind    Kind
	name    string
	queue   int // logical queue, -1: the compiler picks
	after   []int
	algo    *algorithm.Algorithm
	tensors []*tensor.Tensor
	push    []byte
	groups  [3]uint32
	regions []vk.CopyRegion
	fill    record.FillPlan
	host    []byte // upload source, download destination (aliases the caller's slice)
	reads   int    // opaque: tensors[:reads] are read, the rest written
	record  func(cmd vk.CommandBuffer)
}

// label names node i in String and errors: its index and name, or its
// index and kind when it has no name.
func (n *node) label(i int) string {
	if n.name != "" {
		return fmt.Sprintf("%d %s", i, n.name)
	}
	return fmt.Sprintf("%d %s", i, n.kind)
}

// fullLabel names node i in DOT: its index, kind and name (if any).
func (n *node) fullLabel(i int) string {
	if n.name != "" {
		return fmt.Sprintf("%d %s %s", i, n.kind, n.name)
	}
	return fmt.Sprintf("%d %s", i, n.kind)
}

// add validates and appends a node; a failure sticks and Compile returns
// it. The returned Node is valid either way, so calls chain. ts and a (nil
// for none) are what the node uses: check runs holding a reference on each
// (record.Hold), so that a Close racing it cannot free what it reads; the
// graph keeps none afterwards (Compile takes its own).
func (g *Graph) add(what string, ts []*tensor.Tensor, a *algorithm.Algorithm, check func() (node, error)) Node {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := len(g.nodes)
	if g.err != nil {
		g.nodes = append(g.nodes, node{kind: KindOpaque, queue: -1})
		return Node{g, i}
	}
	objs, err := record.Hold(g.dev, ts, a)
	var n node
	if err == nil {
		n, err = check()
		record.Release(objs)
	}
	if err != nil {
		g.err = fmt.Errorf("graph: node %d (%s): %w", i, what, err)
		n = node{kind: KindOpaque}
	}
	n.queue = -1
	g.nodes = append(g.nodes, n)
	return Node{g, i}
}

// Dispatch records the algorithm with the tensors bound to it now and push
// constants given as typed values (see algorithm.Push). What each binding
// reads and writes comes from the shader (readonly/writeonly qualifiers);
// the node depends on earlier nodes through those accesses.
func (g *Graph) Dispatch(a *algorithm.Algorithm, push ...any) Node {
	if a == nil {
		return g.add("dispatch", nil, nil, func() (node, error) {
			return node{}, core.Invalid("nil algorithm")
		})
	}
	return g.add("dispatch", nil, a, func() (node, error) {
		data, err := algorithm.Push(push...)
		if err != nil {
			return node{}, err
		}
		if len(data) != a.PushSize() {
			return node{}, core.Invalid("push constants are %d bytes, the pipeline's are %d", len(data), a.PushSize())
		}
		ts, groups, err := a.Snapshot()
		if err != nil {
			return node{}, err
		}
		// The graph holds no references until Compile.
		for _, t := range ts {
			t.Object().Release()
		}
		for i, t := range ts {
			if t.ReadOnly() && a.Access(i) != algorithm.ReadOnly {
				return node{}, core.Invalid("binding %d writes a read-only tensor", i)
			}
		}
		return node{kind: KindDispatch, algo: a, push: data, tensors: ts, groups: groups}, nil
	})
}

// Copy records a copy from src to dst, of whole tensors or of regions in
// elements, with the checks of sequence.Copy.
func (g *Graph) Copy(src, dst *tensor.Tensor, regions ...sequence.Region) Node {
	return g.add("copy", []*tensor.Tensor{src, dst}, nil, func() (node, error) {
		rs, err := sequence.CopyRegions(src, dst, regions)
		if err != nil {
			return node{}, err
		}
		return node{kind: KindCopy, tensors: []*tensor.Tensor{src, dst}, regions: rs}, nil
	})
}

// Fill records a fill of every element of t with v, as sequence.Fill.
func (g *Graph) Fill(t *tensor.Tensor, v any) Node {
	return g.add("fill", []*tensor.Tensor{t}, nil, func() (node, error) {
		if t.ReadOnly() {
			return node{}, core.Invalid("the tensor is read-only")
		}
		p, err := record.PlanFill(t, v)
		if err != nil {
			return node{}, err
		}
		return node{kind: KindFill, tensors: []*tensor.Tensor{t}, fill: p}, nil
	})
}

// Upload records a host-to-device copy into t from src, a slice of t's
// element type (or []byte) with exactly t's bytes. src is read at every
// run, when the run is submitted, so the caller may change it between runs;
// the bytes go through a host-visible staging buffer of the Exec's and a
// GPU copy, so t may be in any memory, Storage included.
func (g *Graph) Upload(t *tensor.Tensor, src any) Node {
	return g.add("upload", []*tensor.Tensor{t}, nil, func() (node, error) {
		b, err := hostSlice(t, src)
		if err != nil {
			return node{}, err
		}
		if t.ReadOnly() {
			return node{}, core.Invalid("the tensor is read-only")
		}
		return node{kind: KindUpload, tensors: []*tensor.Tensor{t}, host: b}, nil
	})
}

// Download records a device-to-host copy of t into dst, a slice of t's
// element type (or []byte) with exactly t's bytes. dst is written when a
// run completes: by Run, or by the Pending's Wait after RunAsync.
func (g *Graph) Download(t *tensor.Tensor, dst any) Node {
	return g.add("download", []*tensor.Tensor{t}, nil, func() (node, error) {
		b, err := hostSlice(t, dst)
		if err != nil {
			return node{}, err
		}
		return node{kind: KindDownload, tensors: []*tensor.Tensor{t}, host: b}, nil
	})
}

// Opaque records commands the graph cannot see into: rec is called with
// the node's command buffer each time the Exec records it, and must record
// only commands that read reads and write writes (their whole buffers).
// The node is ordered like any other by those declared accesses, with
// barriers on all commands and memory. Use the vk package to record.
func (g *Graph) Opaque(name string, reads, writes []*tensor.Tensor, rec func(cmd vk.CommandBuffer)) Node {
	ts := append(append([]*tensor.Tensor(nil), reads...), writes...)
	return g.add("opaque", ts, nil, func() (node, error) {
		if rec == nil {
			return node{}, core.Invalid("nil record function")
		}
		for i, t := range writes {
			if t.ReadOnly() {
				return node{}, core.Invalid("write %d is a read-only tensor", i)
			}
		}
		return node{kind: KindOpaque, name: name, tensors: ts, reads: len(reads), record: rec}, nil
	})
}

// Input declares tensors that the host fills before runs, so that reading
// them with no writer in the graph draws no warning at Compile.
func (g *Graph) Input(ts ...*tensor.Tensor) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range ts {
		if t != nil && t.Object().Device() == g.dev && t.Object().TryAcquire() {
			g.inputs[t.Allocation().Buffer] = true
			t.Object().Release()
		}
	}
}

// Err returns the first recording error.
func (g *Graph) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Len returns the number of recorded nodes.
func (g *Graph) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.nodes)
}

// set applies an option to n under the graph's lock; on the zero Node it
// does nothing (there is no graph to report to).
func (n Node) set(f func(*node) error) Node {
	if n.g == nil {
		return n
	}
	g := n.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil || n.i >= len(g.nodes) {
		return n
	}
	if err := f(&g.nodes[n.i]); err != nil {
		g.err = fmt.Errorf("graph: node %d: %w", n.i, err)
	}
	return n
}

// OnQueue pins the node to logical queue q of the Manager. Without it the
// compiler picks a queue.
func (n Node) OnQueue(q int) Node {
	return n.set(func(nd *node) error {
		if q < 0 || q >= len(n.g.dev.Queues()) {
			return core.Invalid("OnQueue(%d): the Manager has logical queues 0..%d", q, len(n.g.dev.Queues())-1)
		}
		nd.queue = q
		return nil
	})
}

// Named gives the node a name for String, DOT and errors.
func (n Node) Named(name string) Node {
	return n.set(func(nd *node) error { nd.name = name; return nil })
}

// After orders the node after deps (nodes of the same graph: the zero
// Node or a node of another graph is ErrInvalid at Compile), beyond the
// order its reads and writes imply, with a full memory dependency. An
// After that contradicts the recorded accesses makes a cycle, which
// Compile reports.
func (n Node) After(deps ...Node) Node {
	return n.set(func(nd *node) error {
		for _, d := range deps {
			if d.g == nil {
				return core.Invalid("After: the zero Node is not a node of any graph")
			}
			if d.g != n.g || d.i < 0 || d.i >= len(n.g.nodes) {
				return core.Invalid("After: node %d is not a node of this graph", d.i)
			}
			if d.i == n.i {
				return core.Invalid("After: a node cannot follow itself")
			}
			nd.after = append(nd.after, d.i)
		}
		return nil
	})
}

// hostSlice checks a host slice for an upload or download of t and returns
// its bytes (aliasing it).
func hostSlice(t *tensor.Tensor, v any) ([]byte, error) {
	b, d, err := bytesOf(v)
	if err != nil {
		return nil, err
	}
	if d != 0 && d != t.Dtype() {
		return nil, core.Invalid("mismatched dtypes: tensor is %v, slice is %v", t.Dtype(), d)
	}
	if uint64(len(b)) != t.Bytes() {
		return nil, core.Invalid("the slice has %d bytes, the tensor %d", len(b), t.Bytes())
	}
	return b, nil
}

// bytesOf returns a typed slice's bytes and dtype (0 for []byte).
func bytesOf(v any) ([]byte, tensor.Dtype, error) {
	switch x := v.(type) {
	case []byte:
		return x, 0, nil
	case []tensor.Half:
		return raw(x), tensor.Float16, nil
	case []float32:
		return raw(x), tensor.Float32, nil
	case []float64:
		return raw(x), tensor.Float64, nil
	case []int8:
		return raw(x), tensor.Int8, nil
	case []int16:
		return raw(x), tensor.Int16, nil
	case []int32:
		return raw(x), tensor.Int32, nil
	case []int64:
		return raw(x), tensor.Int64, nil
	case []uint16:
		return raw(x), tensor.Uint16, nil
	case []uint32:
		return raw(x), tensor.Uint32, nil
	case []uint64:
		return raw(x), tensor.Uint64, nil
	case []bool:
		return raw(x), tensor.Bool, nil
	}
	return nil, 0, core.Invalid("host data must be a slice of the tensor's element type or []byte, got %T", v)
}

func raw[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

package main

// Graphs (package graph): recording and compiling through handles (exec.go
// runs them).
// A node is named by its index in its graph (the int32 the node calls
// return). Upload sources and download destinations are the caller's
// memory, read and written by every run (see vkflow.h).

/*
#include <stdlib.h>
#include "vkflow.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// cGraph is a graph and its nodes in recording order, so that C can name a
// node by index.
type cGraph struct {
	g     *graph.Graph
	mu    sync.Mutex
	nodes []graph.Node
}

// added keeps n and reports the graph's recording error, if any (it
// sticks: every later call reports it too, and so does compile).
func (g *cGraph) added(n graph.Node, out *C.int32_t) C.int {
	g.mu.Lock()
	// By ID, not by arrival: calls on other threads may interleave.
	if id := n.ID(); id >= len(g.nodes) {
		g.nodes = append(g.nodes, make([]graph.Node, id+1-len(g.nodes))...)
	}
	g.nodes[n.ID()] = n
	g.mu.Unlock()
	if err := g.g.Err(); err != nil {
		return fail(err)
	}
	if out != nil {
		*out = C.int32_t(n.ID())
	}
	return C.VKFLOW_OK
}

func (g *cGraph) node(i C.int32_t) (graph.Node, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i < 0 || int(i) >= len(g.nodes) || g.nodes[i] == (graph.Node{}) {
		return graph.Node{}, errInvalid("node %d is not a node of this graph (it has %d)", i, len(g.nodes))
	}
	return g.nodes[i], nil
}

func errInvalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{vkflow.ErrInvalid}, args...)...)
}

// pushArgs turns push constant bytes into values for algorithm.Push.
func pushArgs(p unsafe.Pointer, n C.uint64_t) ([]any, error) {
	if n == 0 {
		return nil, nil
	}
	if p == nil || n > 4096 {
		return nil, errInvalid("push constants: %d bytes at %p", uint64(n), p)
	}
	b := unsafe.Slice((*byte)(p), int(n))
	args := make([]any, len(b))
	for i, v := range b {
		args[i] = v
	}
	return args, nil
}

// hostBytes is the caller's memory as a slice (not copied).
func hostBytes(p unsafe.Pointer, n C.uint64_t, what string) ([]byte, error) {
	if p == nil || n == 0 || n > 1<<40 {
		return nil, errInvalid("%s: %d bytes at %p", what, uint64(n), p)
	}
	return unsafe.Slice((*byte)(p), int(n)), nil
}

// fillValue decodes one element of dtype d from its little-endian bytes.
func fillValue(d tensor.Dtype, b []byte) (any, error) {
	if len(b) != d.Size() {
		return nil, errInvalid("fill value: %d bytes for a %v element (%d bytes)", len(b), d, d.Size())
	}
	le := binary.LittleEndian
	switch d {
	case tensor.Float16:
		return tensor.Half(le.Uint16(b)), nil
	case tensor.Float32:
		return math.Float32frombits(le.Uint32(b)), nil
	case tensor.Float64:
		return math.Float64frombits(le.Uint64(b)), nil
	case tensor.Int8:
		return int8(b[0]), nil
	case tensor.Int16:
		return int16(le.Uint16(b)), nil
	case tensor.Int32:
		return int32(le.Uint32(b)), nil
	case tensor.Int64:
		return int64(le.Uint64(b)), nil
	case tensor.Uint8:
		return b[0], nil
	case tensor.Uint16:
		return le.Uint16(b), nil
	case tensor.Uint32:
		return le.Uint32(b), nil
	case tensor.Uint64:
		return le.Uint64(b), nil
	case tensor.Bool:
		return b[0] != 0, nil
	case tensor.Complex64:
		return complex(math.Float32frombits(le.Uint32(b)), math.Float32frombits(le.Uint32(b[4:]))), nil
	case tensor.Complex128:
		return complex(math.Float64frombits(le.Uint64(b)), math.Float64frombits(le.Uint64(b[8:]))), nil
	}
	return nil, errInvalid("fill value: dtype %v", d)
}

//export vkflow_graph_new
func vkflow_graph_new(h C.vkflow_manager, out *C.vkflow_graph) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_graph_new: out is NULL")
	}
	g, err := graph.New(m)
	if err != nil {
		return fail(err)
	}
	*out = newHandle(&cGraph{g: g})
	return C.VKFLOW_OK
}

//export vkflow_graph_close
func vkflow_graph_close(h C.vkflow_graph) C.int {
	if _, err := lookup[*cGraph](h, "graph"); err == nil {
		dropHandle(h) // a graph holds no Vulkan object and no reference
	}
	return C.VKFLOW_OK
}

//export vkflow_graph_len
func vkflow_graph_len(h C.vkflow_graph, n *C.int32_t) C.int {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return fail(err)
	}
	if n == nil {
		return invalid("vkflow_graph_len: n is NULL")
	}
	*n = C.int32_t(g.g.Len())
	return C.VKFLOW_OK
}

//export vkflow_graph_dispatch
func vkflow_graph_dispatch(h C.vkflow_graph, ha C.vkflow_algorithm, push unsafe.Pointer, pushBytes C.uint64_t, node *C.int32_t) C.int {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return fail(err)
	}
	al, err := lookup[*algorithm.Algorithm](ha, "algorithm")
	if err != nil {
		return fail(err)
	}
	args, err := pushArgs(push, pushBytes)
	if err != nil {
		return fail(err)
	}
	return g.added(g.g.Dispatch(al, args...), node)
}

//export vkflow_graph_copy
func vkflow_graph_copy(h C.vkflow_graph, src, dst C.vkflow_tensor, nregions C.int32_t, regions *C.int64_t, node *C.int32_t) C.int {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return fail(err)
	}
	a, b, err := tensorPair(src, dst)
	if err != nil {
		return fail(err)
	}
	if nregions < 0 || nregions > 1<<20 || (nregions > 0 && regions == nil) {
		return invalid("vkflow_graph_copy: %d regions at %p", nregions, regions)
	}
	var rs []sequence.Region
	if nregions > 0 {
		raw := unsafe.Slice((*int64)(unsafe.Pointer(regions)), 3*int(nregions))
		for i := 0; i < len(raw); i += 3 {
			rs = append(rs, sequence.Region{Src: int(raw[i]), Dst: int(raw[i+1]), Len: int(raw[i+2])})
		}
	}
	return g.added(g.g.Copy(a, b, rs...), node)
}

//export vkflow_graph_fill
func vkflow_graph_fill(h C.vkflow_graph, th C.vkflow_tensor, value unsafe.Pointer, valueBytes C.uint64_t, node *C.int32_t) C.int {
	g, t, err := graphTensor(h, th)
	if err != nil {
		return fail(err)
	}
	b, err := hostBytes(value, valueBytes, "vkflow_graph_fill")
	if err != nil {
		return fail(err)
	}
	v, err := fillValue(t.Dtype(), b)
	if err != nil {
		return fail(err)
	}
	return g.added(g.g.Fill(t, v), node)
}

//export vkflow_graph_upload
func vkflow_graph_upload(h C.vkflow_graph, th C.vkflow_tensor, src unsafe.Pointer, nbytes C.uint64_t, node *C.int32_t) C.int {
	return hostNode(h, th, src, nbytes, node, "vkflow_graph_upload", (*graph.Graph).Upload)
}

//export vkflow_graph_download
func vkflow_graph_download(h C.vkflow_graph, th C.vkflow_tensor, dst unsafe.Pointer, nbytes C.uint64_t, node *C.int32_t) C.int {
	return hostNode(h, th, dst, nbytes, node, "vkflow_graph_download", (*graph.Graph).Download)
}

// hostNode adds an upload or download of host memory p.
func hostNode(h C.vkflow_graph, th C.vkflow_tensor, p unsafe.Pointer, nbytes C.uint64_t, node *C.int32_t, what string, add func(*graph.Graph, *tensor.Tensor, any) graph.Node) C.int {
	g, t, err := graphTensor(h, th)
	if err != nil {
		return fail(err)
	}
	b, err := hostBytes(p, nbytes, what)
	if err != nil {
		return fail(err)
	}
	return g.added(add(g.g, t, b), node)
}

// graphTensor looks up a graph and a tensor handle.
func graphTensor(h C.vkflow_graph, th C.vkflow_tensor) (*cGraph, *tensor.Tensor, error) {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return nil, nil, err
	}
	t, err := lookup[*tensor.Tensor](th, "tensor")
	if err != nil {
		return nil, nil, err
	}
	return g, t, nil
}

//export vkflow_graph_node_queue
func vkflow_graph_node_queue(h C.vkflow_graph, node, queue C.int32_t) C.int {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return fail(err)
	}
	n, err := g.node(node)
	if err != nil {
		return fail(err)
	}
	n.OnQueue(int(queue))
	return fail(g.g.Err())
}

//export vkflow_graph_node_name
func vkflow_graph_node_name(h C.vkflow_graph, node C.int32_t, name *C.char) C.int {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return fail(err)
	}
	n, err := g.node(node)
	if err != nil {
		return fail(err)
	}
	if name == nil {
		return invalid("vkflow_graph_node_name: NULL name")
	}
	n.Named(C.GoString(name))
	return fail(g.g.Err())
}

//export vkflow_graph_node_after
func vkflow_graph_node_after(h C.vkflow_graph, node C.int32_t, ndeps C.int32_t, deps *C.int32_t) C.int {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return fail(err)
	}
	n, err := g.node(node)
	if err != nil {
		return fail(err)
	}
	if ndeps < 0 || (ndeps > 0 && deps == nil) {
		return invalid("vkflow_graph_node_after: %d deps at %p", ndeps, deps)
	}
	var ds []graph.Node
	if ndeps > 0 {
		for _, i := range unsafe.Slice((*int32)(unsafe.Pointer(deps)), int(ndeps)) {
			d, err := g.node(C.int32_t(i))
			if err != nil {
				return fail(err)
			}
			ds = append(ds, d)
		}
	}
	n.After(ds...)
	return fail(g.g.Err())
}

//export vkflow_graph_input
func vkflow_graph_input(h C.vkflow_graph, n C.int32_t, tensors *C.vkflow_tensor) C.int {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return fail(err)
	}
	if n < 0 || (n > 0 && tensors == nil) {
		return invalid("vkflow_graph_input: %d tensors at %p", n, tensors)
	}
	ts, err := tensorList(n, tensors)
	if err != nil {
		return fail(err)
	}
	g.g.Input(ts...)
	return C.VKFLOW_OK
}

//export vkflow_graph_compile
func vkflow_graph_compile(h C.vkflow_graph, nqueues C.int32_t, queues *C.int32_t, maxNodes C.int32_t, maxWork C.uint64_t, out *C.vkflow_exec) C.int {
	g, err := lookup[*cGraph](h, "graph")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_graph_compile: out is NULL")
	}
	if nqueues < 0 || nqueues > 1024 || (nqueues > 0 && queues == nil) {
		return invalid("vkflow_graph_compile: %d queues at %p", nqueues, queues)
	}
	if maxNodes < 0 {
		return invalid("vkflow_graph_compile: max_nodes_per_submit %d", maxNodes)
	}
	var opts []graph.Option
	if nqueues > 0 {
		qs := make([]int, nqueues)
		for i, q := range unsafe.Slice((*int32)(unsafe.Pointer(queues)), int(nqueues)) {
			qs[i] = int(q)
		}
		opts = append(opts, graph.Queues(qs...))
	}
	if maxNodes > 0 {
		opts = append(opts, graph.MaxNodesPerSubmit(int(maxNodes)))
	}
	if maxWork > 0 {
		opts = append(opts, graph.MaxWorkPerSubmit(uint64(maxWork)))
	}
	e, err := g.g.Compile(opts...)
	if err != nil {
		return fail(err)
	}
	g.mu.Lock()
	nodes := append([]graph.Node(nil), g.nodes...)
	g.mu.Unlock()
	*out = newHandle(&cExec{e: e, nodes: nodes})
	return C.VKFLOW_OK
}

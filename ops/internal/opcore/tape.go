package opcore

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Tape records ops into a graph, as Op.AddTo does, and remembers each
// call (its op, inputs, outputs, attributes and queue), so that Grad can
// build the graph's backward graph from the registry's VJPs.
//
//	g, _ := graph.New(mgr)
//	tp, _ := ops.NewTape(mgr, g)
//	h, _ := tp.Call1("matmul", ops.Attrs{}, x, w)
//	y, _ := tp.Call1("sum", ops.Attrs{}, h)
//	bw, _ := tp.Grad([]*tensor.Tensor{y}, []*tensor.Tensor{dy}, []*tensor.Tensor{x, w})
//	fwd, _ := g.Compile(graph.Queues(0, 1))
//	bwd, _ := bw.Graph.Compile(graph.Queues(0, 1))
//	fwd.Run(ctx); bwd.Run(ctx) // bw.Grads hold dL/dx and dL/dw
//
// Ownership: the Tape owns the ops it prepared (forward and backward), the
// outputs they allocated, and the backward graph's tensors (its
// intermediates, constants and gradients); Close releases them, after
// closing the Execs compiled from its graphs. The inputs and the
// cotangents belong to the caller. A Tape is safe for concurrent use.
type Tape struct {
	owner Owner
	g     *graph.Graph

	mu     sync.Mutex
	queue  int // logical queue of the next calls; -1: the compiler's choice
	recs   []tapeRec
	ops    []*Op
	made   []*tensor.Tensor
	closed bool
}

type tapeRec struct {
	name    string
	in, out []*tensor.Tensor
	at      Attrs
	queue   int
}

// NewTape returns a tape that records into g.
func NewTape(o Owner, g *graph.Graph) (*Tape, error) {
	if g == nil {
		return nil, core.Invalid("ops.NewTape: nil graph")
	}
	if _, err := core.From(o); err != nil {
		return nil, err
	}
	return &Tape{owner: o, g: g, queue: -1}, nil
}

// Graph returns the forward graph the tape records into.
func (t *Tape) Graph() *graph.Graph { return t.g }

// OnQueue pins the ops of the next calls (and their VJPs in Grad's
// backward graph) to logical queue q; -1 leaves them to the compiler.
func (t *Tape) OnQueue(q int) *Tape {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queue = q
	return t
}

// Owner returns the Manager (or device) the tape's ops belong to.
func (t *Tape) Owner() Owner { return t.owner }

// DeviceBytes is the device memory the tape holds: the buffers of the
// tensors it owns (the forward ops' outputs and, after Grad, the backward
// graphs' tensors; a buffer shared by several tensors counted once) and
// its ops' scratch buffers. The caller's inputs and cotangents are not
// counted.
func (t *Tape) DeviceBytes() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	sizes := map[uint64]uint64{} // by VkBuffer: a view counts as its buffer
	add := func(x *tensor.Tensor) {
		if x == nil || x.Closed() {
			return
		}
		a := x.Allocation()
		sizes[uint64(a.Buffer)] = max(sizes[uint64(a.Buffer)], a.Size)
	}
	for _, m := range t.made {
		add(m)
	}
	for _, op := range t.ops {
		for _, s := range op.scratch {
			add(s)
		}
	}
	var n uint64
	for _, v := range sizes {
		n += v
	}
	return n
}

// Queue returns the logical queue OnQueue set (-1: the compiler's choice).
func (t *Tape) Queue() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.queue
}

// Call prepares the op name over in, adds its dispatches to the graph and
// returns its outputs (owned by the tape). Nothing runs until the graph is
// compiled and run.
func (t *Tape) Call(name string, at Attrs, in ...*tensor.Tensor) ([]*tensor.Tensor, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, core.Closed("ops.Tape")
	}
	if dynamicOp(name) != nil {
		return nil, core.Invalid("ops.Tape: %q has an output shape that depends on the data: it cannot be recorded", name)
	}
	op, err := record(t.owner, t.g, t.queue, name, in, nil, at)
	if err != nil {
		return nil, err
	}
	t.ops = append(t.ops, op)
	t.made = append(t.made, op.made...)
	outs := op.Outputs()
	t.recs = append(t.recs, tapeRec{name: name, in: slices.Clone(in), out: outs, at: at, queue: t.queue})
	return outs, nil
}

// Call1 is Call for an op's first output.
func (t *Tape) Call1(name string, at Attrs, in ...*tensor.Tensor) (*tensor.Tensor, error) {
	outs, err := t.Call(name, at, in...)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// record prepares the op and adds its nodes to g on queue q.
func record(o Owner, g *graph.Graph, q int, name string, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
	op, err := Prepare(o, name, in, out, at)
	if err != nil {
		return nil, err
	}
	for _, st := range op.steps {
		n := g.Dispatch(st.alg, st.push...).Named(name)
		if q >= 0 {
			n.OnQueue(q)
		}
	}
	if err := g.Err(); err != nil {
		_ = op.Close()
		for _, m := range op.made {
			_ = m.Close()
		}
		return nil, err
	}
	return op, nil
}

// Backward is a tape's backward graph.
type Backward struct {
	// Graph computes the gradients from the forward graph's tensors and the
	// cotangents: run it after the forward graph (on the same queues, or
	// ordered by a timeline), and again after each forward run.
	Graph *graph.Graph
	// Grads are the gradients, one per tensor Grad was asked for, in order
	// (zeros for one the outputs do not depend on). The tape owns them.
	Grads []*tensor.Tensor
	// Saved are the forward tensors the backward graph reads (inputs,
	// outputs and intermediates the VJPs need); SavedBytes is their size.
	Saved      []*tensor.Tensor
	SavedBytes uint64
	// AllocatedBytes is the size of the tensors the backward graph
	// allocated (outputs of its ops, constants, zeros; not the ops' own
	// scratch). ReusedBytes is what its ops' outputs took from dead buffers
	// instead (a value no later op reads gives its buffer to the next
	// output of its dtype and shape): without that reuse the graph would
	// have allocated AllocatedBytes + ReusedBytes.
	AllocatedBytes, ReusedBytes uint64
}

// Grad builds the backward graph: the gradient of the outputs outs
// (tensors the tape's calls made, or inputs), weighted by the cotangents
// cots (one per output, its shape and dtype; the caller writes them before
// each backward run), with respect to the tensors wrt. Each recorded op's
// VJP is added in reverse order, on the queue its op was pinned to;
// cotangents of a tensor used more than once are summed. Nothing runs. An
// op on the path from wrt to outs without a VJP is ErrNoGradient naming
// it, and then the tape is left as it was.
func (t *Tape) Grad(outs, cots, wrt []*tensor.Tensor) (*Backward, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, core.Closed("ops.Tape")
	}
	if len(outs) == 0 || len(outs) != len(cots) {
		return nil, core.Invalid("ops.Tape.Grad: %d outputs and %d cotangents (one per output, at least one)", len(outs), len(cots))
	}
	for i, o := range outs {
		c := cots[i]
		if o == nil || c == nil {
			return nil, core.Invalid("ops.Tape.Grad: output or cotangent %d is nil", i)
		}
		if c.Dtype() != o.Dtype() || !slices.Equal(c.Shape(), o.Shape()) {
			return nil, core.Invalid("ops.Tape.Grad: cotangent %d is %v %v, the output is %v %v", i, c.Dtype(), c.Shape(), o.Dtype(), o.Shape())
		}
	}
	for i, w := range wrt {
		if w == nil || !differentiableDtype(w.Dtype()) {
			return nil, core.Invalid("ops.Tape.Grad: wrt[%d] is not a float or complex tensor", i)
		}
	}
	bg, err := graph.New(t.owner)
	if err != nil {
		return nil, err
	}
	// Everything the backward graph allocates is kept here until it is
	// built whole; a failure closes it all, and the tape is as before.
	var ops []*Op
	var made []*tensor.Tensor
	fail := func(err error) (*Backward, error) {
		for _, op := range ops {
			_ = op.Close()
		}
		for _, m := range made {
			_ = m.Close()
		}
		return nil, err
	}
	saved := map[*tensor.Tensor]bool{}
	queue := -1
	pool := &gradPool{Owner: t.owner}
	lv := &gradLiveness{pool: pool, produced: map[*tensor.Tensor]bool{},
		consumed: map[*tensor.Tensor]bool{}, wrt: map[*tensor.Tensor]bool{}}
	for _, w := range wrt {
		lv.wrt[w] = true
	}
	call := func(name string, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
		op, err := record(pool, bg, queue, name, in, out, at)
		if err != nil {
			return nil, err
		}
		for _, x := range in {
			saved[x] = true
		}
		ops = append(ops, op)
		made = append(made, op.made...)
		outs := op.Outputs()
		lv.recorded(op.made, outs)
		return outs, nil
	}
	keep := func(ts []*tensor.Tensor) { made = append(made, ts...) }
	// Which tensors depend on wrt.
	live := map[*tensor.Tensor]bool{}
	for _, w := range wrt {
		live[w] = true
	}
	for _, r := range t.recs {
		for _, x := range r.in {
			if live[x] {
				for _, y := range r.out {
					live[y] = true
				}
				break
			}
		}
	}
	cot := map[*tensor.Tensor]*tensor.Tensor{}
	accumulate := func(x, g *tensor.Tensor) error {
		prev, ok := cot[x]
		if !ok {
			cot[x] = g
			return nil
		}
		sum, err := call("add", []*tensor.Tensor{prev, g}, nil, Attrs{})
		if err != nil {
			return err
		}
		cot[x] = sum[0]
		return nil
	}
	for i, o := range outs {
		if live[o] {
			if err := accumulate(o, cots[i]); err != nil {
				return fail(err)
			}
		}
	}
	for k := len(t.recs) - 1; k >= 0; k-- {
		r := t.recs[k]
		gouts := make([]*tensor.Tensor, len(r.out))
		anyCot := false
		for j, y := range r.out {
			gouts[j] = cot[y]
			anyCot = anyCot || gouts[j] != nil
		}
		wants := make([]bool, len(r.in))
		anyWant := false
		for i, x := range r.in {
			wants[i] = live[x]
			anyWant = anyWant || wants[i]
		}
		if anyCot && anyWant {
			queue = r.queue
			grads, err := runVJP(pool, call, keep, r.name, r.in, r.out, gouts, r.at, wants)
			if err != nil {
				return fail(fmt.Errorf("ops.Tape.Grad: %w", err))
			}
			for i, g := range grads {
				if g != nil {
					if err := accumulate(r.in[i], g); err != nil {
						return fail(err)
					}
				}
			}
		}
		// r's outputs are consumed: what this step produced and no later
		// step reads is dead, and later outputs may take its buffer.
		for _, y := range r.out {
			lv.consumed[y] = true
		}
		lv.release(cot)
	}
	bw := &Backward{Graph: bg}
	for _, w := range wrt {
		g := cot[w]
		if g == nil {
			z, err := tensor.New(t.owner, w.Dtype(), w.Shape())
			if err != nil {
				return fail(err)
			}
			made = append(made, z)
			g = z
		} else if slices.Contains(cots, g) {
			// The gradient is a cotangent itself (wrt is an output):
			// a copy, so that Grads are the tape's.
			c, err := call("strided_copy", []*tensor.Tensor{g}, nil, Attrs{Shape: g.Shape()})
			if err != nil {
				return fail(err)
			}
			g = c[0]
		}
		bw.Grads = append(bw.Grads, g)
	}
	// The forward tensors and cotangents the backward graph reads are its
	// inputs: written outside it.
	in := append([]*tensor.Tensor(nil), cots...)
	for _, x := range append(slices.Clone(made), cots...) {
		delete(saved, x)
	}
	for x := range saved {
		in = append(in, x)
	}
	for _, w := range wrt {
		if saved[w] {
			bw.Saved = append(bw.Saved, w)
			bw.SavedBytes += w.Bytes()
			delete(saved, w)
		}
	}
	for _, r := range t.recs {
		for _, x := range append(slices.Clone(r.in), r.out...) {
			if saved[x] {
				bw.Saved = append(bw.Saved, x)
				bw.SavedBytes += x.Bytes()
				delete(saved, x)
			}
		}
	}
	bg.Input(in...)
	if err := bg.Err(); err != nil {
		return fail(err)
	}
	made = dedup(append(made, pool.views...))
	for _, m := range made {
		if _, view := pool.root[m]; !view { // a view has no memory of its own
			bw.AllocatedBytes += m.Bytes()
		}
	}
	bw.ReusedBytes = pool.reused
	t.ops = append(t.ops, ops...)
	t.made = append(t.made, made...)
	return bw, nil
}

func dedup(ts []*tensor.Tensor) []*tensor.Tensor {
	seen := map[*tensor.Tensor]bool{}
	var out []*tensor.Tensor
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Close releases the tape's ops and tensors (see Tape). Close the Execs
// compiled from its graphs first. Idempotent.
func (t *Tape) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	ops, made := t.ops, t.made
	t.ops, t.made, t.recs = nil, nil, nil
	t.mu.Unlock()
	var errs []error
	for _, op := range ops {
		errs = append(errs, op.Close())
	}
	for _, m := range dedup(made) {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}

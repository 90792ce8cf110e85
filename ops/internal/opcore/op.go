package opcore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// Owner is what constructors take: a *vkflow.Manager.
type Owner = core.Owner

// Op is a prepared operator: its compute pipelines, bound to its inputs,
// outputs and scratch buffers, and the dispatches that compute it. An Op
// can be recorded into any number of sequences and graphs, and run, as
// often as wanted; it records the same dispatches each time.
//
// Ownership: the Op owns its pipelines, its scratch tensors and the
// sequence Run uses; Close releases them. Inputs and outputs belong to the
// caller, including outputs the Op allocated (Outputs returns them): they
// stay open after Close. Sequences and graphs that recorded the Op keep
// what they recorded alive until they are done with it, as for any
// algorithm.
type Op struct {
	name    string
	owner   Owner
	dev     *core.Device
	steps   []step
	ins     []*tensor.Tensor
	outs    []*tensor.Tensor
	made    []*tensor.Tensor // outputs allocated here: closed only if building fails
	scratch []*tensor.Tensor

	mu     sync.Mutex
	seq    *sequence.Sequence // Run's, made at the first Run
	closed bool
}

// step is one dispatch: an algorithm with its workgroups set, and its push
// constants.
type step struct {
	alg  *algorithm.Algorithm
	push []any
}

// Name returns the operator's name, as registered.
func (op *Op) Name() string { return op.name }

// Inputs returns the input tensors, in order.
func (op *Op) Inputs() []*tensor.Tensor { return append([]*tensor.Tensor(nil), op.ins...) }

// Outputs returns the output tensors, in order: those given, and those the
// Op allocated in place of nil ones. The caller owns them all.
func (op *Op) Outputs() []*tensor.Tensor { return append([]*tensor.Tensor(nil), op.outs...) }

// Out returns the first output.
func (op *Op) Out() *tensor.Tensor {
	if len(op.outs) == 0 {
		return nil
	}
	return op.outs[0]
}

// Dispatches returns how many dispatches the Op records (0 for an Op on
// empty tensors).
func (op *Op) Dispatches() int { return len(op.steps) }

func (op *Op) usable() error {
	if op == nil {
		return core.Invalid("nil Op")
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.closed {
		return core.Closed("ops." + op.name)
	}
	return nil
}

// Record appends the Op's dispatches to s and returns s, for chaining; an
// error sticks to s as for any recording. The sequence infers the barriers
// between the dispatches and around them. To read outputs on the host,
// record s.SyncLocal(outputs...) after it.
func (op *Op) Record(s *sequence.Sequence) *sequence.Sequence {
	if s == nil || op == nil {
		return s
	}
	// A closed Op's algorithms are closed: the sequence then records the
	// error "algorithm: use after Close".
	for _, st := range op.steps {
		s = s.Dispatch(st.alg, st.push...)
	}
	return s
}

// AddTo appends the Op's dispatches to g as nodes named after the Op
// ("softmax", or "sum/1", "sum/2" for an Op of several dispatches) and
// returns the last one (the zero Node when the Op has no dispatches). The
// graph infers the dependencies from what each dispatch reads and writes,
// so ops recorded one after another form a DAG the graph may run on
// several queues. Use the returned node's OnQueue or After to place it.
func (op *Op) AddTo(g *graph.Graph) graph.Node {
	var last graph.Node
	if g == nil || op == nil {
		return last
	}
	for i, st := range op.steps {
		name := op.name
		if len(op.steps) > 1 {
			name = fmt.Sprintf("%s/%d", op.name, i+1)
		}
		last = g.Dispatch(st.alg, st.push...).Named(name)
	}
	return last
}

// Run computes the Op on logical queue 0 and waits until its outputs can
// be read on the host. The first Run records a sequence that later runs
// submit again. A context that ends first returns its error; the GPU work
// then completes on its own and nothing it uses is freed before.
func (op *Op) Run(ctx context.Context) error {
	if err := op.usable(); err != nil {
		return err
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if len(op.steps) == 0 {
		return nil
	}
	if op.seq == nil {
		s, err := sequence.New(op.owner, 0)
		if err != nil {
			return err
		}
		op.Record(s).SyncLocal(op.outs...)
		if err := s.Err(); err != nil {
			_ = s.Close()
			return err
		}
		op.seq = s
	}
	return op.seq.Eval(ctx)
}

// Close releases the Op's pipelines, scratch tensors and sequence; not its
// inputs or outputs. Work already submitted completes first. Idempotent;
// nil is a no-op.
func (op *Op) Close() error {
	if op == nil {
		return nil
	}
	op.mu.Lock()
	if op.closed {
		op.mu.Unlock()
		return nil
	}
	op.closed = true
	seq := op.seq
	op.seq = nil
	op.mu.Unlock()
	var errs []error
	if seq != nil {
		errs = append(errs, seq.Close())
	}
	for _, st := range op.steps {
		errs = append(errs, st.alg.Close())
	}
	for _, t := range op.scratch {
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}

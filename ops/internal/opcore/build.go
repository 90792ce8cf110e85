package opcore

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/glsl"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// NewOp starts building the Op name over inputs ins: it checks the owner
// and that every input is open and on the owner's device. Kernels then add
// outputs, scratch tensors and dispatches, and return op.done() or
// op.fail(err).
func NewOp(o Owner, name string, ins ...*tensor.Tensor) (*Op, error) {
	d, err := core.From(o)
	if err != nil {
		return nil, fmt.Errorf("ops.%s: %w", name, err)
	}
	for i, t := range ins {
		if err := checkTensor(d, name, fmt.Sprintf("input %d", i), t); err != nil {
			return nil, err
		}
	}
	return &Op{name: name, owner: o, dev: d, ins: slices.Clone(ins)}, nil
}

func checkTensor(d *core.Device, name, what string, t *tensor.Tensor) error {
	switch {
	case t == nil:
		return core.Invalid("ops.%s: %s is nil", name, what)
	case t.Closed():
		return core.Closed(fmt.Sprintf("ops.%s: %s", name, what))
	case t.Object().Device() != d:
		return core.Invalid("ops.%s: %s belongs to another Manager", name, what)
	}
	return nil
}

// Errorf returns an ErrInvalid error prefixed with the op's name.
func (op *Op) Errorf(format string, args ...any) error {
	return core.Invalid("ops.%s: %s", op.name, fmt.Sprintf(format, args...))
}

// Output adds an output of dtype dt and shape: given, after checking its
// dtype and shape, or a new Device tensor when given is nil (in a backward
// graph Tape.Grad builds, a dead buffer of the same dtype and shape when
// there is one: see gradPool).
func (op *Op) Output(given *tensor.Tensor, dt tensor.Dtype, shape []int) (*tensor.Tensor, error) {
	if given == nil {
		if p, ok := op.owner.(*gradPool); ok {
			if t := p.take(dt, shape); t != nil {
				op.outs = append(op.outs, t)
				return t, nil
			}
		}
		t, err := tensor.New(op.owner, dt, shape)
		if err != nil {
			return nil, fmt.Errorf("ops.%s: output %d: %w", op.name, len(op.outs), err)
		}
		op.made = append(op.made, t)
		op.outs = append(op.outs, t)
		return t, nil
	}
	what := fmt.Sprintf("output %d", len(op.outs))
	if err := checkTensor(op.dev, op.name, what, given); err != nil {
		return nil, err
	}
	if given.Dtype() != dt {
		return nil, op.Errorf("%s is %v, want %v", what, given.Dtype(), dt)
	}
	if !slices.Equal(given.Shape(), shape) {
		return nil, op.Errorf("%s has shape %v, want %v", what, given.Shape(), shape)
	}
	if given.ReadOnly() {
		return nil, op.Errorf("%s is read-only", what)
	}
	op.outs = append(op.outs, given)
	return given, nil
}

// NoAlias fails when an output shares memory with an input: for ops whose
// invocations read elements other than the one they write.
func (op *Op) NoAlias() error {
	for i, o := range op.outs {
		for j, in := range op.ins {
			if o.Allocation() == in.Allocation() {
				return op.Errorf("output %d is input %d: this op cannot work in place", i, j)
			}
		}
	}
	return nil
}

// OutputNoAlias is output for an op that cannot work in place: the output
// is then checked against every input (noAlias).
func (op *Op) OutputNoAlias(given *tensor.Tensor, dt tensor.Dtype, shape []int) (*tensor.Tensor, error) {
	t, err := op.Output(given, dt, shape)
	if err != nil {
		return nil, err
	}
	return t, op.NoAlias()
}

// Temp adds a scratch tensor the Op owns, in GPU-only memory.
func (op *Op) Temp(dt tensor.Dtype, shape []int) (*tensor.Tensor, error) {
	t, err := tensor.New(op.owner, dt, shape, tensor.In(tensor.Storage))
	if err != nil {
		return nil, fmt.Errorf("ops.%s: scratch: %w", op.name, err)
	}
	op.scratch = append(op.scratch, t)
	return t, nil
}

// Dispatch compiles the GLSL compute shader src (cached by its hash, see
// package glsl), builds a pipeline bound to ts (bindings 0..len(ts)-1) and
// adds one dispatch of groups workgroups with push constants push.
func (op *Op) Dispatch(src string, ts []*tensor.Tensor, groups [3]uint32, push ...any) error {
	return op.dispatchSpec(src, ts, groups, nil, push...)
}

// dispatchSpec is dispatch with specialization constants (algorithm.Spec
// options): one compiled module serves every value of them.
func (op *Op) dispatchSpec(src string, ts []*tensor.Tensor, groups [3]uint32, spec []algorithm.Option, push ...any) error {
	code, err := glsl.Compile(src, glsl.Name(op.name+".comp"))
	if err != nil {
		return fmt.Errorf("ops.%s: %w", op.name, err)
	}
	return op.dispatchSPIRV(code, ts, groups, spec, push...)
}

// dispatchSPIRV is dispatchSpec for a compiled module.
func (op *Op) dispatchSPIRV(code []byte, ts []*tensor.Tensor, groups [3]uint32, spec []algorithm.Option, push ...any) error {
	opts := append([]algorithm.Option{algorithm.Workgroups(groups[0], groups[1], groups[2])}, spec...)
	a, err := algorithm.New(op.owner, code, ts, opts...)
	if err != nil {
		return fmt.Errorf("ops.%s: %w", op.name, err)
	}
	if _, err := algorithm.Push(push...); err != nil {
		_ = a.Close()
		return fmt.Errorf("ops.%s: %w", op.name, err)
	}
	op.steps = append(op.steps, step{alg: a, push: push})
	return nil
}

// Fail releases everything the Op made, outputs included, and returns err.
func (op *Op) Fail(err error) (*Op, error) {
	errs := []error{err}
	for _, t := range op.made {
		errs = append(errs, t.Close())
	}
	errs = append(errs, op.Close())
	return nil, errors.Join(errs...)
}

// Done finishes building. A building error e closes what was made.
func (op *Op) Done(e error) (*Op, error) {
	if e != nil {
		return op.Fail(e)
	}
	return op, nil
}

// Repeated is a kernel dispatched many times with different push
// constants: one pipeline, many steps.
type Repeated struct {
	Src    string
	Ts     []*tensor.Tensor
	Groups [3]uint32
	alg    *algorithm.Algorithm
}

// Again adds a dispatch of k with push constants push.
func (op *Op) Again(k *Repeated, push ...any) error {
	if k.alg == nil {
		if err := op.Dispatch(k.Src, k.Ts, k.Groups, push...); err != nil {
			return err
		}
		k.alg = op.steps[len(op.steps)-1].alg
		return nil
	}
	op.steps = append(op.steps, step{alg: k.alg, push: push})
	return nil
}

// ScratchOnly runs f, which adds dispatches, and then drops the outputs f
// registered (a matmul's or a diagonal's output bookkeeping undone: what
// they wrote is scratch, not an output of op).
func (op *Op) ScratchOnly(f func() error) error {
	outs := op.outs
	err := f()
	op.outs = outs
	return err
}

// Adopt makes t (a table made on the host, say) scratch of op: closed
// with it.
func (op *Op) Adopt(t *tensor.Tensor) { op.scratch = append(op.scratch, t) }

// Device returns the device the op was prepared on, for op packages that
// size their kernels by its features and limits.
func (op *Op) Device() *core.Device { return op.dev }

// Owner returns the owner the op was prepared with.
func (op *Op) Owner() Owner { return op.owner }

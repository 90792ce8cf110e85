package ops

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/glsl"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// newOp starts building the Op name over inputs ins: it checks the owner
// and that every input is open and on the owner's device. Kernels then add
// outputs, scratch tensors and dispatches, and return op.done() or
// op.fail(err).
func newOp(o Owner, name string, ins ...*tensor.Tensor) (*Op, error) {
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

// errorf returns an ErrInvalid error prefixed with the op's name.
func (op *Op) errorf(format string, args ...any) error {
	return core.Invalid("ops.%s: %s", op.name, fmt.Sprintf(format, args...))
}

// output adds an output of dtype dt and shape: given, after checking its
// dtype and shape, or a new Device tensor when given is nil.
func (op *Op) output(given *tensor.Tensor, dt tensor.Dtype, shape []int) (*tensor.Tensor, error) {
	if given == nil {
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
		return nil, op.errorf("%s is %v, want %v", what, given.Dtype(), dt)
	}
	if !slices.Equal(given.Shape(), shape) {
		return nil, op.errorf("%s has shape %v, want %v", what, given.Shape(), shape)
	}
	if given.ReadOnly() {
		return nil, op.errorf("%s is read-only", what)
	}
	op.outs = append(op.outs, given)
	return given, nil
}

// noAlias fails when an output shares memory with an input: for ops whose
// invocations read elements other than the one they write.
func (op *Op) noAlias() error {
	for i, o := range op.outs {
		for j, in := range op.ins {
			if o.Allocation() == in.Allocation() {
				return op.errorf("output %d is input %d: this op cannot work in place", i, j)
			}
		}
	}
	return nil
}

// outputNoAlias is output for an op that cannot work in place: the output
// is then checked against every input (noAlias).
func (op *Op) outputNoAlias(given *tensor.Tensor, dt tensor.Dtype, shape []int) (*tensor.Tensor, error) {
	t, err := op.output(given, dt, shape)
	if err != nil {
		return nil, err
	}
	return t, op.noAlias()
}

// temp adds a scratch tensor the Op owns, in GPU-only memory.
func (op *Op) temp(dt tensor.Dtype, shape []int) (*tensor.Tensor, error) {
	t, err := tensor.New(op.owner, dt, shape, tensor.In(tensor.Storage))
	if err != nil {
		return nil, fmt.Errorf("ops.%s: scratch: %w", op.name, err)
	}
	op.scratch = append(op.scratch, t)
	return t, nil
}

// dispatch compiles the GLSL compute shader src (cached by its hash, see
// package glsl), builds a pipeline bound to ts (bindings 0..len(ts)-1) and
// adds one dispatch of groups workgroups with push constants push.
func (op *Op) dispatch(src string, ts []*tensor.Tensor, groups [3]uint32, push ...any) error {
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

// fail releases everything the Op made, outputs included, and returns err.
func (op *Op) fail(err error) (*Op, error) {
	errs := []error{err}
	for _, t := range op.made {
		errs = append(errs, t.Close())
	}
	errs = append(errs, op.Close())
	return nil, errors.Join(errs...)
}

// done finishes building. A building error e closes what was made.
func (op *Op) done(e error) (*Op, error) {
	if e != nil {
		return op.fail(e)
	}
	return op, nil
}

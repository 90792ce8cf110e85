package opcore

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Gradients (reverse mode). Every registered op has a gradient entry
// (GradientOf): a vector-Jacobian product (VJP) written as a composition
// of registered ops, a statement that the op has no derivative (with the
// reason), or, for ops whose rule is not written yet, a statement saying
// so. Asking an op without a VJP for its gradient is ErrNoGradient, never
// a silent zero.
//
// Conventions, as PyTorch and JAX: the gradient of a real input is real;
// for complex inputs it is the conjugate Wirtinger form, so a holomorphic
// f has grad_x = grad_y · conj(f'(x)), and a real loss's gradient is
// ∂L/∂Re x + i ∂L/∂Im x. Inputs that broadcast get the cotangent summed
// back to their shape. Integer and bool inputs (indices, conditions) get
// no gradient (nil). Ops whose derivative is zero almost everywhere
// (floor, ceil, trunc, round, sign, floor_divide) give zeros, as PyTorch
// and JAX do.

// ErrNoGradient: the op has no VJP (it is not differentiable, or its rule
// is not written yet). It wraps vkflow.ErrInvalid too.
var ErrNoGradient = errors.New("ops: no gradient")

// GradKind says what an op's gradient entry is.
type GradKind int

const (
	// GradNone: the op has no derivative (comparisons, bitwise and logical
	// ops, indices).
	GradNone GradKind = iota
	// GradVJP: the op has a VJP.
	GradVJP
	// GradPending: the op is differentiable, but its VJP is not written
	// yet.
	GradPending
)

func (k GradKind) String() string {
	switch k {
	case GradVJP:
		return "vjp"
	case GradPending:
		return "pending"
	}
	return "none"
}

// GradInfo is an op's gradient entry.
type GradInfo struct {
	Kind GradKind
	// Reason says why an op has no VJP (Kind GradNone or GradPending).
	Reason string
	// Zero: the VJP is zero almost everywhere (floor, sign, ...).
	Zero bool
}

// VJPFunc is a VJP rule: from b's inputs, outputs, cotangents and
// attributes it computes the gradient of each input with b's ops (Call,
// and the helpers), and returns one entry per input: nil for an input
// that gets no gradient (b.Wants(i) false, or an index or a condition).
// Errors stick to b (b.Err), as they do to a sequence.
type VJPFunc func(b *GradBuilder) []*tensor.Tensor

type gradEntry struct {
	kind   GradKind
	fn     VJPFunc
	reason string
	zero   bool
}

var grads = map[string]gradEntry{} // guarded by registry's lock

// DefVJP gives the built-in op name its VJP; init functions call it.
func DefVJP(name string, fn VJPFunc) {
	registry.Lock()
	defer registry.Unlock()
	grads[name] = gradEntry{kind: GradVJP, fn: fn}
}

// defZeroVJP gives the built-in ops names a VJP of zeros.
func defZeroVJP(names ...string) {
	for _, n := range names {
		registry.Lock()
		grads[n] = gradEntry{kind: GradVJP, fn: zeroVJP, zero: true}
		registry.Unlock()
	}
}

// DefNoGrad marks the built-in ops names as not differentiable.
func DefNoGrad(reason string, names ...string) {
	registry.Lock()
	defer registry.Unlock()
	for _, n := range names {
		grads[n] = gradEntry{kind: GradNone, reason: reason}
	}
}

// defPending marks the built-in ops names as differentiable without a VJP
// yet.
func defPending(reason string, names ...string) {
	registry.Lock()
	defer registry.Unlock()
	for _, n := range names {
		grads[n] = gradEntry{kind: GradPending, reason: reason}
	}
}

// RegisterVJP gives the registered kernel name its VJP: a composition of
// ops (a VJPFunc), or a kernel of its own (KernelVJP). Built-in ops keep
// theirs. Registering again replaces the rule; Unregister of the kernel
// removes it.
func RegisterVJP(name string, fn VJPFunc) error {
	if fn == nil {
		return core.Invalid("ops.RegisterVJP: %q: nil rule", name)
	}
	registry.Lock()
	defer registry.Unlock()
	e, ok := registry.m[name]
	switch {
	case !ok:
		return core.Invalid("ops.RegisterVJP: no op named %q: Register the kernel first", name)
	case e.kernel == nil:
		return core.Invalid("ops.RegisterVJP: %q is a built-in op; its gradient is fixed", name)
	}
	grads[name] = gradEntry{kind: GradVJP, fn: fn}
	registry.gen++
	return nil
}

// KernelVJP is the VJP rule "call the registered kernel vjpOp": its
// inputs are the op's inputs, then its outputs, then the cotangents
// (zeros for an output without one); its outputs, which the rule
// allocates as zeros, are the inputs' gradients, in order, each of its
// input's shape and dtype. It runs with the forward call's attributes
// (its push constants and workgroups).
func KernelVJP(vjpOp string) VJPFunc {
	return func(b *GradBuilder) []*tensor.Tensor {
		in := append([]*tensor.Tensor(nil), b.in...)
		for i := range b.outs() {
			in = append(in, b.Out(i))
		}
		for i := range b.outs() {
			in = append(in, b.Cot(i))
		}
		gs := make([]*tensor.Tensor, len(b.in))
		for i, x := range b.in {
			gs[i] = b.Zeros(x.Dtype(), x.Shape())
		}
		if b.err != nil {
			return nil
		}
		if _, err := b.call(vjpOp, in, gs, b.at); err != nil {
			b.Fail(fmt.Errorf("ops.%s: VJP kernel %s: %w", b.name, vjpOp, err))
			return nil
		}
		return gs
	}
}

// GradientOf returns the gradient entry of the op name.
func GradientOf(name string) (GradInfo, error) {
	registry.RLock()
	defer registry.RUnlock()
	if _, ok := registry.m[name]; !ok {
		return GradInfo{}, core.Invalid("ops: no op named %q (ops.Names lists them)", name)
	}
	e, ok := grads[name]
	if !ok {
		return GradInfo{Kind: GradPending, Reason: "no VJP registered (RegisterVJP gives a kernel one)"}, nil
	}
	return GradInfo{Kind: e.kind, Reason: e.reason, Zero: e.zero}, nil
}

// Differentiable returns the names of the ops that have a VJP, sorted.
func Differentiable() []string {
	registry.RLock()
	defer registry.RUnlock()
	var names []string
	for n := range registry.m {
		if grads[n].kind == GradVJP {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// vjpRule returns the op's rule, or ErrNoGradient naming why not.
func vjpRule(name string) (VJPFunc, error) {
	info, err := GradientOf(name)
	if err != nil {
		return nil, err
	}
	if info.Kind == GradVJP {
		registry.RLock()
		fn := grads[name].fn
		registry.RUnlock()
		return fn, nil
	}
	what := "is not differentiable"
	if info.Kind == GradPending {
		what = "has no VJP yet"
	}
	return nil, fmt.Errorf("ops.%s: %w: the op %s (%s): %w", name, ErrNoGradient, what, info.Reason, core.ErrInvalid)
}

// zeroVJP gives zeros for every float or complex input.
func zeroVJP(b *GradBuilder) []*tensor.Tensor {
	g := make([]*tensor.Tensor, len(b.in))
	for i, x := range b.in {
		if b.Wants(i) {
			g[i] = b.Zeros(x.Dtype(), x.Shape())
		}
	}
	return g
}

// differentiableDtype: float and complex tensors carry gradients.
func differentiableDtype(dt tensor.Dtype) bool {
	return IsFloat(dt) || dt.IsComplex()
}

// checkVJPArgs checks the tensors of a VJP call at the boundary.
func checkVJPArgs(name string, in, out, cot []*tensor.Tensor) error {
	for i, t := range in {
		if t == nil {
			return core.Invalid("ops.%s: VJP: input %d is nil", name, i)
		}
	}
	if len(cot) == 0 {
		return core.Invalid("ops.%s: VJP: no cotangents", name)
	}
	if len(out) != 0 && len(out) != len(cot) {
		return core.Invalid("ops.%s: VJP: %d outputs and %d cotangents (give one per output, or no outputs)", name, len(out), len(cot))
	}
	for i, c := range cot {
		if c == nil || i >= len(out) || out[i] == nil {
			continue
		}
		if c.Dtype() != out[i].Dtype() || !slices.Equal(c.Shape(), out[i].Shape()) {
			return core.Invalid("ops.%s: VJP: cotangent %d is %v %v, the output is %v %v", name, i,
				c.Dtype(), c.Shape(), out[i].Dtype(), out[i].Shape())
		}
	}
	return nil
}

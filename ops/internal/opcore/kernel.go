package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/glsl"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/spirv"
	"github.com/vkflow/vkflow/tensor"
)

// Kernel is a compute shader registered by name (Register). Give GLSL
// source or a SPIR-V module, not both. Its storage buffers are at set 0,
// bindings 0..n-1: the first Inputs are its inputs, the rest its outputs,
// which the caller always gives (a registered kernel cannot infer their
// shapes). Attrs.Push holds its push constants and Attrs.Groups its
// workgroups (zero: one invocation per element of the first output, or of
// the first input when it has no outputs, in groups of its local size x).
type Kernel struct {
	GLSL   string
	SPIRV  []byte
	Inputs int
}

// userKernel is a registered kernel, compiled and reflected.
type userKernel struct {
	name   string
	code   []byte
	inputs int
	mod    *spirv.Module
}

func (k Kernel) compile(name string) (*userKernel, error) {
	code := k.SPIRV
	switch {
	case k.GLSL != "" && len(k.SPIRV) > 0:
		return nil, core.Invalid("ops.Register(%q): give GLSL or SPIR-V, not both", name)
	case k.GLSL != "":
		var err error
		if code, err = glsl.Compile(k.GLSL, glsl.Name(name+".comp")); err != nil {
			return nil, fmt.Errorf("ops.Register(%q): %w", name, err)
		}
	case len(code) == 0:
		return nil, core.Invalid("ops.Register(%q): no GLSL source or SPIR-V", name)
	}
	mod, err := spirv.Reflect(code)
	if err != nil {
		return nil, core.Invalid("ops.Register(%q): %v", name, err)
	}
	if k.Inputs < 0 || k.Inputs > len(mod.Bindings) {
		return nil, core.Invalid("ops.Register(%q): %d inputs, but the shader has %d bindings", name, k.Inputs, len(mod.Bindings))
	}
	return &userKernel{name: name, code: append([]byte(nil), code...), inputs: k.Inputs, mod: mod}, nil
}

func (k *userKernel) build(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
	nout := len(k.mod.Bindings) - k.inputs
	if err := Inputs(k.name, in, k.inputs); err != nil {
		return nil, err
	}
	if len(out) != nout {
		return nil, core.Invalid("ops.%s: %d outputs given, the kernel has %d (a registered kernel's outputs must all be given)", k.name, len(out), nout)
	}
	if len(at.Push) != int(k.mod.PushConstantSize) {
		return nil, core.Invalid("ops.%s: %d bytes of push constants, the kernel takes %d", k.name, len(at.Push), k.mod.PushConstantSize)
	}
	op, err := NewOp(o, k.name, in...)
	if err != nil {
		return nil, err
	}
	for i, t := range out {
		if t == nil {
			return op.Fail(op.Errorf("output %d is nil: a registered kernel's outputs must be given", i))
		}
		if _, err := op.Output(t, t.Dtype(), t.Shape()); err != nil {
			return op.Fail(err)
		}
	}
	groups := at.Groups
	if groups == [3]uint32{} {
		var first *tensor.Tensor
		switch {
		case len(out) > 0:
			first = out[0]
		case len(in) > 0:
			first = in[0]
		}
		if first != nil && first.Len() > 0 {
			local := k.mod.LocalSize[0]
			n := (uint64(first.Len()) + uint64(local) - 1) / uint64(local)
			if n > uint64(op.dev.Info.Limits.MaxComputeWorkGroupCount[0]) {
				return op.Fail(op.Errorf("%d workgroups exceed maxComputeWorkGroupCount[0] %d: give Attrs.Groups", n, op.dev.Info.Limits.MaxComputeWorkGroupCount[0]))
			}
			groups = [3]uint32{uint32(n), 1, 1}
		}
	}
	if groups[0] == 0 || groups[1] == 0 || groups[2] == 0 {
		return op, nil // nothing to do
	}
	push := make([]any, len(at.Push))
	for i, b := range at.Push {
		push[i] = b
	}
	ts := append(append([]*tensor.Tensor(nil), in...), out...)
	return op.Done(op.dispatchSPIRV(k.code, ts, groups, nil, push...))
}

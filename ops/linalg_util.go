package ops

import (
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/tensor"
)

// Helpers of the linalg ops' kernels.

// linRun adds a dispatch of src over ts with one invocation per element
// of n (gid() < n), in groups of localSize.
func (op *Op) linRun(src string, ts []*tensor.Tensor, n int, push ...any) error {
	if n == 0 {
		return nil
	}
	groups, err := op.grid(uint64(n), localSize)
	if err != nil {
		return err
	}
	return op.dispatch(src, ts, groups, push...)
}

// linGroups adds a dispatch of src over ts with one workgroup
// (of the kernel's local size) per item of n (the item is wgid()).
func (op *Op) linGroups(src string, ts []*tensor.Tensor, n int, push ...any) error {
	if n == 0 {
		return nil
	}
	groups, err := op.grid(uint64(n), 1)
	if err != nil {
		return err
	}
	return op.dispatch(src, ts, groups, push...)
}

// repeated is a kernel dispatched many times with different push
// constants: one pipeline, many steps.
type repeated struct {
	src    string
	ts     []*tensor.Tensor
	groups [3]uint32
	alg    *algorithm.Algorithm
}

// again adds a dispatch of k with push constants push.
func (op *Op) again(k *repeated, push ...any) error {
	if k.alg == nil {
		if err := op.dispatch(k.src, k.ts, k.groups, push...); err != nil {
			return err
		}
		k.alg = op.steps[len(op.steps)-1].alg
		return nil
	}
	op.steps = append(op.steps, step{alg: k.alg, push: push})
	return nil
}

// wgidGLSL defines wgid(): the flat index of this workgroup over a grid
// made by grid(n, 1).
const wgidGLSL = `uint wgid() {
	return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
}
`

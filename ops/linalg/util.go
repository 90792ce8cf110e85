package linalg

import (
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// Helpers of the linalg ops' kernels.

// linRun adds a dispatch of src over ts with one invocation per element
// of n (gid() < n), in groups of localSize.
func linRun(op *opcore.Op, src string, ts []*tensor.Tensor, n int, push ...any) error {
	if n == 0 {
		return nil
	}
	groups, err := op.Grid(uint64(n), opcore.LocalSize)
	if err != nil {
		return err
	}
	return op.Dispatch(src, ts, groups, push...)
}

// linGroups adds a dispatch of src over ts with one workgroup
// (of the kernel's local size) per item of n (the item is wgid()).
func linGroups(op *opcore.Op, src string, ts []*tensor.Tensor, n int, push ...any) error {
	if n == 0 {
		return nil
	}
	groups, err := op.Grid(uint64(n), 1)
	if err != nil {
		return err
	}
	return op.Dispatch(src, ts, groups, push...)
}

// wgidGLSL defines wgid(): the flat index of this workgroup over a grid
// made by grid(n, 1).
const wgidGLSL = `uint wgid() {
	return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
}
`

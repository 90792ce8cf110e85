package linalg

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// The factorizations of the linalg ops (LU, Cholesky, QR and the
// triangular solves) are sequences of steps over a stack of matrices:
// step s does some work on one column or row, the panel, that the
// invocations of one workgroup share (a pivot search, a norm, a scaling),
// then an update of many independent elements that uses it. A stepKernel
// runs such a sequence in one of two ways, chosen per step on the host:
//
//   - fused: one workgroup per matrix loops over a range of steps, panel
//     then update, with barriers between them; one dispatch covers as many
//     steps as fit the iteration budget;
//   - split, for steps whose update is too large for one workgroup: a
//     dispatch of the panel (a workgroup per matrix), then a dispatch of
//     the update over a grid, one invocation per element.
//
// lavapipe ends an invocation's loops silently once they have run 65535
// iterations in all, so every dispatch is sized to stay under linBudget.

// linWG is the workgroup size of the linalg kernels.
const linWG = 64

// linBudget is the most loop iterations one invocation of a linalg
// kernel may run (lavapipe's cap is 65535).
var linBudget = 30000

// stepKernel describes a stepped factorization.
type stepKernel struct {
	dt tensor.Dtype
	// decls are the GLSL buffers, shared arrays and helpers; the push
	// block is "P { uint b0, s0, s1, e0; <push> } p".
	decls string
	push  string
	// panel is the body of void panel(uint b, uint k); every invocation of
	// the workgroup runs it (tid is its index); it may use barrier().
	panel string
	// update is the body of void update(uint b, uint k, uint e), for e <
	// the count.
	update string
	// stepK maps step s to k (GLSL, over s); count is the GLSL count of
	// update elements at k.
	stepK, count string
	steps        int
	// Host side: the k of step s, the update count at k, the panel's loop
	// iterations at k, and those of one update element at k.
	hostK      func(s int) int
	hostCount  func(k int) int
	panelCost  func(k int) int
	updateCost func(k int) int
}

// linCeil is ceil(a / b).
func linCeil(a, b int) int { return (a + b - 1) / b }

func (sk *stepKernel) source() string {
	var b strings.Builder
	b.WriteString(opcore.Header(sk.dt))
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\nconst uint WG = %du;\n", linWG, linWG)
	fmt.Fprintf(&b, "layout(push_constant) uniform P { uint b0, s0, s1, e0, mode; %s } p;\n", sk.push)
	b.WriteString("uint tid;\n")
	b.WriteString(sk.decls)
	fmt.Fprintf(&b, "uint stepK(uint s) { return %s; }\n", sk.stepK)
	fmt.Fprintf(&b, "uint count(uint k) { return %s; }\n", sk.count)
	fmt.Fprintf(&b, "void panel(uint b, uint k) {\n%s\n}\n", sk.panel)
	fmt.Fprintf(&b, "void update(uint b, uint k, uint e) {\n%s\n}\n", sk.update)
	// One module for the three modes (a push constant picks), so no mode
	// drops a binding the others use.
	b.WriteString(`void main() {
	tid = gl_LocalInvocationIndex;
	if (p.mode == 0u) {
		uint b = gl_WorkGroupID.x + p.b0;
		for (uint s = p.s0; s < p.s1; s++) {
			uint k = stepK(s);
			panel(b, k);
			memoryBarrierBuffer();
			barrier();
			uint c = count(k);
			for (uint e = tid; e < c; e += WG) {
				update(b, k, e);
			}
			memoryBarrierBuffer();
			barrier();
		}
	} else if (p.mode == 1u) {
		panel(gl_WorkGroupID.x + p.b0, stepK(p.s0));
	} else {
		uint k = stepK(p.s0);
		uint e = gl_GlobalInvocationID.x + p.e0;
		if (e < count(k)) {
			update(gl_WorkGroupID.y + p.b0, k, e);
		}
	}
`)
	b.WriteString("}\n")
	return b.String()
}

// run adds the dispatches of every step over nb matrices, bound to ts;
// push are the values of sk.push.
func runSteps(op *opcore.Op, sk *stepKernel, nb int, ts []*tensor.Tensor, push ...any) error {
	if nb == 0 || sk.steps == 0 {
		return nil
	}
	lim := op.Device().Info.Limits.MaxComputeWorkGroupCount
	if opcore.MatmulGridLimit != 0 {
		lim = [3]uint32{opcore.MatmulGridLimit, opcore.MatmulGridLimit, opcore.MatmulGridLimit}
	}
	src := sk.source()
	modes := map[string]uint32{"fused": 0, "panel": 1, "update": 2}
	disp := func(mode string, groups [3]uint32, vals ...any) error {
		vals = append(vals, modes[mode])
		return op.Dispatch(src, ts, groups, append(vals, push...)...)
	}
	batched := func(mode string, s0, s1 int) error {
		for b0 := 0; b0 < nb; b0 += int(lim[0]) {
			g := uint32(min(nb-b0, int(lim[0])))
			if err := disp(mode, [3]uint32{g, 1, 1}, uint32(b0), uint32(s0), uint32(s1), uint32(0)); err != nil {
				return err
			}
		}
		return nil
	}
	start, used := 0, 0
	flush := func(end int) error {
		if end > start {
			if err := batched("fused", start, end); err != nil {
				return err
			}
		}
		start, used = end, 0
		return nil
	}
	for s := 0; s < sk.steps; s++ {
		k := sk.hostK(s)
		pc := sk.panelCost(k) + 2
		if pc > linBudget {
			return core.Unsupported("ops.%s: the matrices are too large for the kernel's loop bound (step %d needs %d iterations, at most %d)", op.Name(), s, pc, linBudget)
		}
		cnt := sk.hostCount(k)
		uc := sk.updateCost(k)
		cost := pc + linCeil(cnt, linWG)*uc
		if cost <= linBudget {
			if used+cost > linBudget {
				if err := flush(s); err != nil {
					return err
				}
			}
			used += cost
			continue
		}
		if uc > linBudget {
			return core.Unsupported("ops.%s: the matrices are too large for the kernel's loop bound (an update element needs %d iterations, at most %d)", op.Name(), uc, linBudget)
		}
		if err := flush(s); err != nil {
			return err
		}
		if err := batched("panel", s, s+1); err != nil {
			return err
		}
		groups := linCeil(cnt, linWG)
		for b0 := 0; b0 < nb; b0 += int(lim[1]) {
			gy := uint32(min(nb-b0, int(lim[1])))
			for x0 := 0; x0 < groups; x0 += int(lim[0]) {
				gx := uint32(min(groups-x0, int(lim[0])))
				if err := disp("update", [3]uint32{gx, gy, 1}, uint32(b0), uint32(s), uint32(s+1), uint32(x0*linWG)); err != nil {
					return err
				}
			}
		}
		start = s + 1
	}
	return flush(sk.steps)
}

// linFloat checks that dt is a dtype the factorizations take: float32,
// float64, complex64 or complex128.
func linFloat(op *opcore.Op, dt tensor.Dtype) error {
	switch dt {
	case tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128:
		return op.RequireDtypes(dt)
	case tensor.Float16:
		return op.Errorf("float16 is not supported: cast to float32 first (the factorizations compute in float32 or float64)")
	}
	return op.Unsupported(dt, "float32, float64, complex64, complex128")
}

// square checks that x is a stack of square matrices and returns the
// batch shape and n.
func square(op *opcore.Op, what string, x *tensor.Tensor) ([]int, int, error) {
	s := x.Shape()
	if len(s) < 2 {
		return nil, 0, op.Errorf("%s has shape %v: want a matrix or a stack of them (..., n, n)", what, s)
	}
	if s[len(s)-1] != s[len(s)-2] {
		return nil, 0, op.Errorf("%s has shape %v: the matrices are not square", what, s)
	}
	return s[:len(s)-2], s[len(s)-1], nil
}

// nanGLSL is a NaN of GLSL type t.
func nanGLSL(t string) string {
	if t == "double" {
		return "packDouble2x32(uvec2(0u, 0x7ff80000u))"
	}
	return "uintBitsToFloat(0x7fc00000u)"
}

// treeGLSL is an unrolled workgroup reduction of shared arrays: step
// holds the GLSL that merges element tid+s into tid (s is a uint).
func treeGLSL(step string) string {
	var b strings.Builder
	b.WriteString("\tbarrier();\n")
	for s := linWG / 2; s >= 1; s /= 2 {
		fmt.Fprintf(&b, "\tif (tid < %du) { uint s = %du; %s }\n\tbarrier();\n", s, s, step)
	}
	return b.String()
}

// elemGrid adds a dispatch of src over n invocations (one per element,
// gid() < n) bound to ts; the push block starts with n.
func elemGrid(op *opcore.Op, src string, ts []*tensor.Tensor, n int, push ...any) error {
	if n == 0 {
		return nil
	}
	groups, err := op.Grid(uint64(n), opcore.LocalSize)
	if err != nil {
		return err
	}
	return op.Dispatch(src, ts, groups, append([]any{uint32(n)}, push...)...)
}

// batchMap returns the merged dims and strides (in matrices) that map an
// output batch index over out to the batch index of a tensor whose batch
// shape is in, broadcast; and the GLSL of uint <name>(uint bo) over push
// members <name>D[] and <name>S[].
func batchMap(in, out []int) (dims, st []int) {
	d, s := opcore.Merge(out, opcore.StridesFor(in, out))
	return d, s[0]
}

// mapGLSL is uint <name>(uint bo): the batch index that batchMap's dims
// and strides (push members <name>D and <name>S, rank of them) give.
func mapGLSL(name string, rank int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "uint %s(uint bo) {\n\tuint r = bo, o = 0u, i;\n", name)
	for d := rank - 1; d >= 0; d-- {
		fmt.Fprintf(&b, "\ti = r %% p.%sD[%d]; r /= p.%sD[%d]; o += i * p.%sS[%d];\n", name, d, name, d, name, d)
	}
	b.WriteString("\treturn o;\n}\n")
	return b.String()
}

// mapPush declares mapGLSL's push members.
func mapPush(name string, rank int) string {
	if rank == 0 {
		return ""
	}
	return fmt.Sprintf(" uint %sD[%d]; uint %sS[%d];", name, rank, name, rank)
}

// mapVals are the push values of batchMap's dims and strides.
func mapVals(dims, st []int) []any {
	var v []any
	for _, d := range dims {
		v = append(v, uint32(d))
	}
	for _, s := range st {
		v = append(v, uint32(s))
	}
	return v
}

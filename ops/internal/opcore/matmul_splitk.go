package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// Split-K: a product with a small output and a long inner dimension (the
// weight gradient Xᵀ·G over a batch) gives too few workgroups to fill the
// device. The inner dimension is then cut into S slices, one per
// workgroup along z, each writing its partial product to its own plane of
// a scratch tensor; one more dispatch sums the S planes in slice order.
// No atomics, so the result is the same bits at every run.

// splitKMinK is the shortest inner dimension split, splitKTarget the
// workgroups a split aims at, splitKMinSlice the shortest slice.
var (
	splitKMinK     = 2048
	splitKTarget   = 256
	splitKMinSlice = 256
)

// splitTiles is the blocking of a split product: small blocks, so a thin
// output still spreads over many invocations.
var splitTiles = Tiles{BM: 8, BN: 16, BK: 4, TM: 4, TN: 4}

// splitK returns the number of slices for an m×n×k product of nb
// matrices in dtype dt: 1 when it is not split.
func splitK(dt tensor.Dtype, nb, m, n, k int) int {
	if (dt != tensor.Float32 && dt != tensor.Float64) || k < splitKMinK {
		return 1
	}
	t := splitTiles
	groups := nb * mmCeil(m, t.BM) * mmCeil(n, t.BN)
	if groups*4 > splitKTarget {
		return 1
	}
	s := min(mmCeil(k, splitKMinSlice), mmCeil(splitKTarget, groups))
	// Each slice within one dispatch's loop budget.
	s = max(s, mmCeil(k, matmulMaxKTiles*t.BK))
	return max(s, 1)
}

// matmulSplit adds the split product's dispatches: s slices of k into a
// scratch [s, nb, m, n], then their sum into c.
func (op *Op) matmulSplit(a, b, c *tensor.Tensor, s, nb, m, n, k int, dims []int, st [][]int) error {
	dt := c.Dtype()
	t := splitTiles
	ks := mmCeil(mmCeil(k, s), t.BK) * t.BK
	s = mmCeil(k, ks)
	part, err := op.Temp(dt, []int{s * nb * m * n})
	if err != nil {
		return err
	}
	lim := op.dev.Info.Limits.MaxComputeWorkGroupCount
	gx, gy, gz := mmCeil(n, t.BN), mmCeil(m, t.BM), s*nb
	if uint32(gx) > lim[0] || uint32(gy) > lim[1] || uint32(gz) > lim[2] {
		return op.Errorf("split product grid %d×%d×%d past the device's limits", gx, gy, gz)
	}
	src := splitGLSL(matmulGLSL(dt, len(dims), false, t))
	if !strings.Contains(src, "kEnd = min") || !strings.Contains(src, "ss * p.nbz") {
		return op.Errorf("internal: the split kernel's rewrite of the tiled kernel failed")
	}
	push := []any{uint32(m), uint32(n), uint32(k), uint32(0), uint32(k), uint32(0), uint32(0), uint32(0), uint32(nb), uint32(ks)}
	for _, v := range append([][]int{dims}, st[:2]...) {
		for _, x := range v {
			push = append(push, uint32(x))
		}
	}
	if err := op.Dispatch(src, []*tensor.Tensor{a, b, part}, [3]uint32{uint32(gx), uint32(gy), uint32(gz)}, push...); err != nil {
		return err
	}
	total := nb * m * n
	groups, err := op.Grid(uint64(total), LocalSize)
	if err != nil {
		return err
	}
	ty := GLSLType(dt)
	sum := Header(dt) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer P { %[2]s part[]; };
layout(std430, binding = 1) writeonly buffer C { %[2]s c[]; };
layout(push_constant) uniform Q { uint n, s; } p;
%[3]svoid main() {
	uint i = gid();
	if (i < p.n) {
		%[2]s acc = part[i];
		for (uint j = 1u; j < p.s; j++) {
			acc += part[j * p.n + i];
		}
		c[i] = acc;
	}
}
`, LocalSize, ty, IndexGLSL)
	return op.Dispatch(sum, []*tensor.Tensor{part, c}, groups, uint32(total), uint32(s))
}

// splitGLSL turns the tiled kernel into its split form: workgroup z is
// (slice, batch), the slice's range of k replaces [k0, k1), and the
// output is the slice's plane of the scratch.
func splitGLSL(src string) string {
	r := strings.NewReplacer(
		"uint m, n, k, k0, k1, x0, y0, z0;", "uint m, n, k, k0, k1, x0, y0, z0, nbz, ks;",
		"uint bi = gl_WorkGroupID.z + p.z0;", "uint zz = gl_WorkGroupID.z + p.z0, bi = zz % p.nbz, ss = zz / p.nbz;\n\tkBeg = ss * p.ks; kEnd = min(p.k1, kBeg + p.ks);",
		"offC = bi * p.m * p.n", "offC = (ss * p.nbz + bi) * p.m * p.n",
		"p.k1", "kEnd",
		"p.k0", "kBeg",
		"} p;\n", "} p;\nuint kBeg, kEnd;\n",
	)
	return r.Replace(src)
}

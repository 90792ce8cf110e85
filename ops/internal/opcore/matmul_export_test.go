package opcore

import "github.com/vkflow/vkflow/tensor"

// MatmulNoBarrier prepares Matmul with a kernel generated without its
// barrier() calls: a broken kernel the tests must catch.
func MatmulNoBarrier(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "matmul", a, b)
	if err != nil {
		return nil, err
	}
	sa, sb := a.Shape(), b.Shape()
	t := pickTiles(sa[len(sa)-2], sb[len(sb)-1])
	t.noBarrier = true
	return op.Done(op.MatMul(a, b, out, t))
}

// MatmulTiled prepares Matmul with another blocking, for tuning.
func MatmulTiled(o Owner, a, b, out *tensor.Tensor, bm, bn, bk, tm, tn int) (*Op, error) {
	op, err := NewOp(o, "matmul", a, b)
	if err != nil {
		return nil, err
	}
	return op.Done(op.MatMul(a, b, out, Tiles{BM: bm, BN: bn, BK: bk, TM: tm, TN: tn}))
}

// SetMatmulLimits replaces the grid limit (0: the device's) and the most
// k-steps per dispatch, and returns a function that restores them.
func SetMatmulLimits(grid uint32, kTiles int) (restore func()) {
	g, k := MatmulGridLimit, matmulMaxKTiles
	MatmulGridLimit, matmulMaxKTiles = grid, kTiles
	return func() { MatmulGridLimit, matmulMaxKTiles = g, k }
}

// MatmulGLSL returns the kernel source, for inspection.
func MatmulGLSL(dt tensor.Dtype, rank int, accumulate bool) string {
	return matmulGLSL(dt, rank, accumulate, pickTiles(1000, 1000))
}

// SetTransposeNoBarrier has Transpose generate its 2-D kernel without the
// barrier (on) or with it (off).
func SetTransposeNoBarrier(on bool) { transposeNoBarrier = on }

// LocalSizes returns the workgroup size of each of op's dispatches.
func LocalSizes(op *Op) [][3]uint32 {
	var out [][3]uint32
	for _, s := range op.steps {
		out = append(out, s.alg.LocalSize())
	}
	return out
}

// MatmulZeros prepares an Op that writes zeros to c (matmul's k = 0).
func MatmulZeros(o Owner, c *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "matmul")
	if err != nil {
		return nil, err
	}
	op.outs = append(op.outs, c)
	return op.Done(op.Zeros(c))
}

// SetSplitKMinK sets the shortest inner dimension Matmul splits (a huge
// one: never) and returns the function that restores it.
func SetSplitKMinK(k int) func() {
	old := splitKMinK
	splitKMinK = k
	return func() { splitKMinK = old }
}

package opcore

import (
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of matmul (matmul.go) and the triangles (tril.go). Complex
// products take the conjugate of the other factor, as PyTorch does.

func init() {
	DefVJP("matmul", matmulVJP)
	for _, name := range []string{"tril", "triu"} {
		DefVJP(name, func(b *GradBuilder) []*tensor.Tensor {
			g := b.Cot(0)
			if b.err != nil {
				return nil
			}
			return []*tensor.Tensor{b.Call(name, b.Attrs(), g)}
		})
	}
}

// matmulVJP: ga = g·bᴴ and gb = aᴴ·g, with 1-d operands as a row (a) and a
// column (b), and broadcast batch dimensions summed back.
func matmulVJP(bl *GradBuilder) []*tensor.Tensor {
	a, b := bl.In(0), bl.In(1)
	g := bl.Cot(0)
	if bl.err != nil {
		return nil
	}
	as, bs := a.Shape(), b.Shape()
	a2, b2 := a, b
	if len(as) == 1 {
		a2 = bl.Reshape(a, []int{1, as[0]})
	}
	if len(bs) == 1 {
		b2 = bl.Reshape(b, []int{bs[0], 1})
	}
	if bl.err != nil {
		return nil
	}
	a2s, b2s := a2.Shape(), b2.Shape()
	batch, err := BroadcastShapes("matmul", a2s[:len(a2s)-2], b2s[:len(b2s)-2])
	if err != nil {
		bl.Fail(err)
		return nil
	}
	g2 := bl.Reshape(g, append(append([]int{}, batch...), a2s[len(a2s)-2], b2s[len(b2s)-1]))
	res := make([]*tensor.Tensor, 2)
	if bl.Wants(0) {
		res[0] = bl.Reshape(bl.SumTo(bl.Binary("matmul", g2, bl.Conj(bl.MT(b2))), a2s), as)
	}
	if bl.Wants(1) {
		res[1] = bl.Reshape(bl.SumTo(bl.Binary("matmul", bl.Conj(bl.MT(a2)), g2), b2s), bs)
	}
	return res
}

package opcore

import (
	"fmt"
	"slices"
	"sort"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of the manipulation and indexing ops (manip.go, transpose.go,
// strided.go, gather.go). Each moves the cotangent back where the
// forward op took its elements from; elements taken more than once
// (broadcast_to, tile, repeat, take) have their cotangents summed, in a
// fixed order, so gradients are deterministic.

// cot1 returns input 0 and the cotangent of output 0.
func cot1(b *GradBuilder) (*tensor.Tensor, *tensor.Tensor) {
	x := b.In(0)
	g := b.Cot(0)
	return x, g
}

func init() {
	DefVJP("transpose", func(b *GradBuilder) []*tensor.Tensor {
		x, g := cot1(b)
		if b.err != nil {
			return nil
		}
		perm := b.Attrs().Perm
		if perm == nil {
			r := len(x.Shape())
			perm = make([]int, r)
			for i := range perm {
				perm[i] = r - 1 - i
			}
		}
		return []*tensor.Tensor{b.Transpose(g, InvPerm(perm))}
	})
	DefVJP("flip", func(b *GradBuilder) []*tensor.Tensor {
		_, g := cot1(b)
		return []*tensor.Tensor{b.Call("flip", b.Attrs(), g)}
	})
	DefVJP("roll", func(b *GradBuilder) []*tensor.Tensor {
		_, g := cot1(b)
		at := b.Attrs()
		at.Shift = slices.Clone(at.Shift)
		for i := range at.Shift {
			at.Shift[i] = -at.Shift[i]
		}
		return []*tensor.Tensor{b.Call("roll", at, g)}
	})
	DefVJP("broadcast_to", func(b *GradBuilder) []*tensor.Tensor {
		x, g := cot1(b)
		if b.err != nil {
			return nil
		}
		return []*tensor.Tensor{b.SumTo(g, x.Shape())}
	})
	DefVJP("tile", tileVJP)
	DefVJP("repeat", repeatVJP)
	DefVJP("concat", concatVJP)
	DefVJP("stack", stackVJP)
	DefVJP("strided_copy", stridedVJP)
	DefVJP("take", gatherVJP)
}

// tileVJP sums the cotangent over the tiles: reshaped to (reps0, x0,
// reps1, x1, ...), summed over the reps axes.
func tileVJP(b *GradBuilder) []*tensor.Tensor {
	x, g := cot1(b)
	if b.err != nil {
		return nil
	}
	xs, reps := x.Shape(), b.Attrs().Reps
	r := max(len(xs), len(reps))
	pad := func(s []int) []int {
		p := make([]int, r-len(s), r)
		for i := range p {
			p[i] = 1
		}
		return append(p, s...)
	}
	px, pr := pad(xs), pad(reps)
	var split, axes []int
	for i := 0; i < r; i++ {
		if pr[i] != 1 && px[i] != 1 {
			axes = append(axes, len(split))
			split = append(split, pr[i], px[i])
		} else {
			split = append(split, pr[i]*px[i])
		}
	}
	if len(split) > MaxRank {
		b.Fail(core.Invalid("ops.tile: VJP: %d split dimensions, more than %d", len(split), MaxRank))
		return nil
	}
	gs := b.Reshape(g, split)
	if len(axes) > 0 {
		gs = b.sum(gs, axes, false)
	}
	// Axes where x had 1 and reps more: sum them there.
	return []*tensor.Tensor{b.Reshape(b.SumTo(b.Reshape(gs, tiledKeep(px, pr)), px), xs)}
}

// tiledKeep is the shape after the split sums: x's size where both x and
// reps exceed 1, else the product.
func tiledKeep(px, pr []int) []int {
	s := make([]int, len(px))
	for i := range px {
		if pr[i] != 1 && px[i] != 1 {
			s[i] = px[i]
		} else {
			s[i] = pr[i] * px[i]
		}
	}
	return s
}

// repeatVJP sums each element's repeats.
func repeatVJP(b *GradBuilder) []*tensor.Tensor {
	x, g := cot1(b)
	if b.err != nil {
		return nil
	}
	at := b.Attrs()
	xs := x.Shape()
	if len(at.Axes) == 0 {
		gs := b.Reshape(g, []int{x.Len(), at.Repeats})
		return []*tensor.Tensor{b.Reshape(b.sum(gs, []int{1}, false), xs)}
	}
	axis, err := AxisAttr("repeat", at.Axes, 0)
	if err != nil {
		b.Fail(err)
		return nil
	}
	if axis < 0 {
		axis += len(xs)
	}
	split := append(append(append([]int{}, xs[:axis+1]...), at.Repeats), xs[axis+1:]...)
	return []*tensor.Tensor{b.sum(b.Reshape(g, split), []int{axis + 1}, false)}
}

// concatVJP slices the cotangent back into the inputs.
func concatVJP(b *GradBuilder) []*tensor.Tensor {
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	axis := b.axisOf(0, len(g.Shape()))
	if b.err != nil {
		return nil
	}
	res := make([]*tensor.Tensor, b.NumIn())
	off := 0
	for i := range res {
		n := b.In(i).Shape()[axis]
		if b.Wants(i) {
			res[i] = b.Slice(g, axis, off, off+n)
		}
		off += n
	}
	return res
}

// stackVJP takes each input's slice of the cotangent.
func stackVJP(b *GradBuilder) []*tensor.Tensor {
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	axis := b.axisOf(0, len(g.Shape()))
	if b.err != nil {
		return nil
	}
	res := make([]*tensor.Tensor, b.NumIn())
	for i := range res {
		if b.Wants(i) {
			res[i] = b.Reshape(b.Slice(g, axis, i, i+1), b.In(i).Shape())
		}
	}
	return res
}

// stridedVJP writes the cotangent into zeros through the source view.
// Broadcast source dimensions (stride 0) are summed first; a view that
// reaches one element in two other ways has no VJP.
func stridedVJP(b *GradBuilder) []*tensor.Tensor {
	x, g := cot1(b)
	if b.err != nil {
		return nil
	}
	if b.at.DstOffset != 0 || b.at.DstStrides != nil {
		b.Fail(fmt.Errorf("ops.strided_copy: VJP: %w: a copy into a given destination view: %w", ErrNoGradient, core.ErrInvalid))
		return nil
	}
	at := b.Attrs()
	shape := at.Shape
	st := at.SrcStrides
	if st == nil {
		st = RowMajor(shape)
	}
	var bc, keepShape, keepSt []int
	for i, s := range st {
		if s == 0 && shape[i] != 1 {
			bc = append(bc, i)
			continue
		}
		keepShape = append(keepShape, shape[i])
		keepSt = append(keepSt, s)
	}
	if len(bc) > 0 {
		g = b.sum(g, bc, false)
	}
	if !nonOverlapping(keepShape, keepSt) {
		b.Fail(fmt.Errorf("ops.strided_copy: VJP: %w: the source view %v strides %v reaches an element twice: %w", ErrNoGradient, shape, st, core.ErrInvalid))
		return nil
	}
	z := b.Zeros(x.Dtype(), x.Shape())
	b.Into("strided_copy", Attrs{Shape: keepShape, DstOffset: at.SrcOffset, DstStrides: keepSt}, z, g)
	return []*tensor.Tensor{z}
}

// nonOverlapping reports whether the view reaches each element once: with
// dimensions sorted by |stride|, each stride passes the extent of those
// before it.
func nonOverlapping(shape, strides []int) bool {
	type dim struct{ n, s int }
	var ds []dim
	for i, n := range shape {
		if n == 0 {
			return true
		}
		if n > 1 {
			s := strides[i]
			if s < 0 {
				s = -s
			}
			ds = append(ds, dim{n, s})
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].s < ds[j].s })
	extent := 0
	for _, d := range ds {
		if d.s <= extent {
			return false
		}
		extent += d.s * (d.n - 1)
	}
	return true
}

func Ptr[T any](v T) *T { return &v }

// arange is [1, n] of 0..n-1 in dtype dt.
func (b *GradBuilder) arange(dt tensor.Dtype, n int) *tensor.Tensor {
	vs := make([]complex128, n)
	for i := range vs {
		vs[i] = complex(float64(i), 0)
	}
	return b.Constant(dt, []int{1, n}, vs)
}

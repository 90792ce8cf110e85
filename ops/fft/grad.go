package fft

import (
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of the FFTs (fft.go). A transform is linear, so its VJP is its
// adjoint: the inverse transform with the dual normalization ("backward"
// and "forward" swap, "ortho" stays), then the input's length restored
// (cropped where the transform zero-padded, zero-padded where it
// cropped). The real transforms add the half-spectrum's bookkeeping:
// rfft's adjoint pads the half spectrum to n bins and takes the real part;
// irfft's is rfft with the bins that stand for two doubled (as PyTorch's
// fft_c2r_backward); hfft and ihfft are irfft and rfft of conjugates.
// rfftn and irfftn chain the n-d adjoints with the last axis's.

func init() {
	opcore.DefVJP("fft", fftVJP)
	opcore.DefVJP("ifft", fftVJP)
	opcore.DefVJP("fftn", fftVJP)
	opcore.DefVJP("ifftn", fftVJP)
	opcore.DefVJP("rfft", func(b *opcore.GradBuilder) []*tensor.Tensor {
		return []*tensor.Tensor{rfftAdjoint(b, b.In(0), b.Cot(0), b.Attrs().N, fftAxis(b), dualNorm(b.Attrs().Norm))}
	})
	opcore.DefVJP("irfft", func(b *opcore.GradBuilder) []*tensor.Tensor {
		return []*tensor.Tensor{irfftAdjoint(b, b.In(0), b.Cot(0), b.Out(0), fftAxis(b), dualNorm(b.Attrs().Norm))}
	})
	opcore.DefVJP("hfft", func(b *opcore.GradBuilder) []*tensor.Tensor {
		// hfft(x, norm) = irfft(conj(x), norm') with norm' the dual.
		g := irfftAdjoint(b, b.In(0), b.Cot(0), b.Out(0), fftAxis(b), b.Attrs().Norm)
		return []*tensor.Tensor{b.Conj(g)}
	})
	opcore.DefVJP("ihfft", func(b *opcore.GradBuilder) []*tensor.Tensor {
		// ihfft(x, norm) = conj(rfft(x, norm')) with norm' the dual.
		return []*tensor.Tensor{rfftAdjoint(b, b.In(0), b.Conj(b.Cot(0)), b.Attrs().N, fftAxis(b), b.Attrs().Norm)}
	})
	opcore.DefVJP("rfftn", func(b *opcore.GradBuilder) []*tensor.Tensor {
		x := b.In(0)
		axes := gradAxes(b)
		if b.Err() != nil {
			return nil
		}
		last := axes[len(axes)-1]
		g := b.Cot(0)
		if len(axes) > 1 {
			g = b.Call("ifftn", opcore.Attrs{Axes: axes[:len(axes)-1], Norm: dualNorm(b.Attrs().Norm)}, g)
			for _, a := range axes[:len(axes)-1] {
				g = fitAxis(b, g, a, x.Shape()[a])
			}
		}
		n := 0
		if s := b.Attrs().S; s != nil {
			n = s[len(s)-1]
		}
		return []*tensor.Tensor{rfftAdjoint(b, x, g, n, last, dualNorm(b.Attrs().Norm))}
	})
	opcore.DefVJP("irfftn", func(b *opcore.GradBuilder) []*tensor.Tensor {
		x := b.In(0)
		axes := gradAxes(b)
		if b.Err() != nil {
			return nil
		}
		last := axes[len(axes)-1]
		g := irfftAdjoint(b, x, b.Cot(0), b.Out(0), last, dualNorm(b.Attrs().Norm))
		if len(axes) > 1 {
			g = b.Call("fftn", opcore.Attrs{Axes: axes[:len(axes)-1], Norm: dualNorm(b.Attrs().Norm)}, g)
			for _, a := range axes[:len(axes)-1] {
				g = fitAxis(b, g, a, x.Shape()[a])
			}
		}
		return []*tensor.Tensor{g}
	})
}

// gradAxes are an n-dimensional transform's axes, normalized as the
// transform does (fftAxes).
func gradAxes(b *opcore.GradBuilder) []int {
	at := b.Attrs()
	axes, err := fftAxes(b.Name(), at.Axes, at.S, len(b.In(0).Shape()))
	if err != nil {
		b.Fail(err)
		return nil
	}
	return axes
}

// dualNorm is the normalization of a transform's adjoint.
func dualNorm(n string) string {
	switch n {
	case "", "backward":
		return "forward"
	case "forward":
		return "backward"
	}
	return n
}

var fftInverse = map[string]string{"fft": "ifft", "ifft": "fft", "fftn": "ifftn", "ifftn": "fftn"}

// fftAxis is a 1-d transform's axis, normalized against its input.
func fftAxis(b *opcore.GradBuilder) int {
	r := len(b.In(0).Shape())
	a := -1
	if len(b.Attrs().Axes) == 1 {
		a = b.Attrs().Axes[0]
	}
	if a < 0 {
		a += r
	}
	return a
}

// fitAxis crops or zero-pads g along axis to length n.
func fitAxis(b *opcore.GradBuilder, g *tensor.Tensor, axis, n int) *tensor.Tensor {
	if g == nil {
		return nil
	}
	have := g.Shape()[axis]
	switch {
	case have > n:
		return b.Slice(g, axis, 0, n)
	case have < n:
		zs := g.Shape()
		zs[axis] = n - have
		return b.Call("concat", opcore.Attrs{Axes: []int{axis}}, g, b.Zeros(g.Dtype(), zs))
	}
	return g
}

// fftVJP: the inverse transform with the dual normalization, over the
// transformed axes, then each axis back to the input's length.
func fftVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	x := b.In(0)
	g := b.Cot(0)
	if b.Err() != nil {
		return nil
	}
	at := b.Attrs()
	axes := []int{fftAxis(b)}
	if b.Name() == "fftn" || b.Name() == "ifftn" {
		axes = gradAxes(b)
	}
	if b.Err() != nil {
		return nil
	}
	gx := b.Call(fftInverse[b.Name()], opcore.Attrs{Axes: axes, Norm: dualNorm(at.Norm)}, g)
	for _, a := range axes {
		gx = fitAxis(b, gx, a, x.Shape()[a])
	}
	return []*tensor.Tensor{gx}
}

// rfftAdjoint: the half spectrum g (n/2+1 bins of an n-point transform of
// x along axis) zero-padded to n bins, transformed back with norm, its
// real part, fitted to x's length.
func rfftAdjoint(b *opcore.GradBuilder, x, g *tensor.Tensor, n, axis int, norm string) *tensor.Tensor {
	if b.Err() != nil {
		return nil
	}
	if n == 0 {
		n = x.Shape()[axis]
	}
	full := fitAxis(b, g, axis, n)
	gx := b.Unary("real", b.Call("ifft", opcore.Attrs{Axes: []int{axis}, Norm: norm}, full))
	return fitAxis(b, gx, axis, x.Shape()[axis])
}

// irfftAdjoint: the rfft of g (y = irfft(x) of length n) with norm, the
// bins that stand for two (1 .. n-n/2-1) doubled, fitted to x's length.
func irfftAdjoint(b *opcore.GradBuilder, x, g, y *tensor.Tensor, axis int, norm string) *tensor.Tensor {
	if b.Err() != nil || y == nil {
		return nil
	}
	n := y.Shape()[axis]
	gi := b.Call("rfft", opcore.Attrs{Axes: []int{axis}, Norm: norm}, g)
	if b.Err() != nil {
		return nil
	}
	bins := gi.Shape()[axis]
	w := make([]complex128, bins)
	for k := range w {
		w[k] = 1
		if k >= 1 && k <= n-n/2-1 {
			w[k] = 2
		}
	}
	shape := make([]int, len(gi.Shape()))
	for i := range shape {
		shape[i] = 1
	}
	shape[axis] = bins
	gi = b.Mul(gi, b.Constant(gi.Dtype(), shape, w))
	return fitAxis(b, gi, axis, x.Shape()[axis])
}

package fft

import (
	"slices"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// The discrete Fourier transforms of the array API standard's fft
// extension (NumPy's numpy.fft): fft, ifft, rfft, irfft, hfft, ihfft along
// one axis, and fftn, ifftn, rfftn, irfftn along several. Each is a chain
// of batched 1-d transforms on the GPU (build.go): every row along the
// axis is one transform, all rows in one dispatch per pass.
//
// Algorithm: a length whose prime factors are 2, 3, 5 and 7 is split into
// Stockham radix passes (16, 8, 4, 2, 7, 5, 3: natural order, no bit
// reversal); any other length (a large prime, say) is Bluestein's chirp-z
// transform: a convolution computed with power-of-two transforms of at
// least 2n-1 points. So every length from 1 up works. Twiddles, chirps and
// Bluestein's filter are computed on the host in float64 (angles reduced
// exactly to [0, pi/4]) and uploaded in the work precision.

// fftKind is what a transform reads and writes.
type fftKind struct {
	name    string
	inverse bool
	nd      bool
	r2c     bool // real input; the last axis keeps n/2+1 outputs (rfft, rfftn, ihfft)
	c2r     bool // Hermitian input on the last axis; real output of length n (irfft, irfftn, hfft)
}

var fftKinds = []fftKind{
	{name: "fft"},
	{name: "ifft", inverse: true},
	{name: "rfft", r2c: true},
	{name: "irfft", inverse: true, c2r: true},
	{name: "hfft", c2r: true},
	{name: "ihfft", inverse: true, r2c: true},
	{name: "fftn", nd: true},
	{name: "ifftn", inverse: true, nd: true},
	{name: "rfftn", nd: true, r2c: true},
	{name: "irfftn", inverse: true, nd: true, c2r: true},
}

func init() {
	opcore.DefSchema("1", 1, []string{"n=the input's length", "axes=-1", "norm"}, "fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
	opcore.DefSchema("1", 1, []string{"s", "axes=all, or the last len(s)", "norm"}, "fftn", "ifftn", "rfftn", "irfftn")
	for _, k := range fftKinds {
		opcore.Builtin(k.name, func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
			if err := opcore.Inputs(k.name, in, 1); err != nil {
				return nil, err
			}
			if err := opcore.TooMany(k.name, out, 1); err != nil {
				return nil, err
			}
			if k.nd {
				if at.N != 0 {
					return nil, core.Invalid("ops.%s: takes s, not n", k.name)
				}
				return fftND(o, k, in[0], at.S, at.Axes, at.Norm, opcore.OutAt(out, 0))
			}
			if at.S != nil {
				return nil, core.Invalid("ops.%s: takes n, not s", k.name)
			}
			axis := -1
			switch len(at.Axes) {
			case 0:
			case 1:
				axis = at.Axes[0]
			default:
				return nil, core.Invalid("ops.%s: takes one axis, not %v", k.name, at.Axes)
			}
			return fft1(o, k, in[0], at.N, axis, at.Norm, opcore.OutAt(out, 0))
		})
	}
}

// fft1 is a 1-d transform along axis; n 0 is the default length.
func fft1(o opcore.Owner, k fftKind, x *tensor.Tensor, n, axis int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	if n < 0 {
		return nil, core.Invalid("ops.%s: n is %d, want >= 1 (or 0: the default)", k.name, n)
	}
	s := []int{-1}
	if n > 0 {
		s[0] = n
	}
	return fftND(o, k, x, s, []int{axis}, norm, out)
}

// FFT is the discrete Fourier transform of x along axis ("fft"): y[k] =
// sum_j x[j] exp(-2 pi i jk/n). x is complex64 or complex128 (float32 and
// float64 are taken as complex with a zero imaginary part), y is complex of
// x's precision. n is the transform length: x's axis is cropped or zero
// padded to n; 0 keeps its length. norm is "backward" (or ""): no scaling,
// "ortho": 1/sqrt(n), "forward": 1/n. A negative axis counts from the end.
// out, if not nil, must have y's dtype and shape.
func FFT(o opcore.Owner, x *tensor.Tensor, n, axis int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fft1(o, fftKinds[0], x, n, axis, norm, out)
}

// IFFT is the inverse transform ("ifft"): y[k] = sum_j x[j] exp(+2 pi i
// jk/n), scaled by 1/n ("backward", ""), 1/sqrt(n) ("ortho") or 1
// ("forward"). As FFT otherwise.
func IFFT(o opcore.Owner, x *tensor.Tensor, n, axis int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fft1(o, fftKinds[1], x, n, axis, norm, out)
}

// RFFT is the transform of real x (float32 or float64) along axis
// ("rfft"): the n/2+1 non-negative frequencies of FFT, complex of x's
// precision. n, axis and norm as for FFT.
func RFFT(o opcore.Owner, x *tensor.Tensor, n, axis int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fft1(o, fftKinds[2], x, n, axis, norm, out)
}

// IRFFT is the inverse of RFFT ("irfft"): x holds the non-negative
// frequencies of a Hermitian sequence of n points (its first n/2+1
// elements are read, cropped or zero padded; the imaginary parts of the
// zero and, for even n, the n/2 frequency are ignored), y is the real
// sequence of n points, of x's precision. n 0 is 2*(m-1) for an axis of m
// elements. norm as for IFFT.
func IRFFT(o opcore.Owner, x *tensor.Tensor, n, axis int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fft1(o, fftKinds[3], x, n, axis, norm, out)
}

// HFFT is the transform of a Hermitian sequence given by its first half
// ("hfft"): real output of n points (n 0: 2*(m-1)), the forward direction
// of IRFFT with FFT's norm.
func HFFT(o opcore.Owner, x *tensor.Tensor, n, axis int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fft1(o, fftKinds[4], x, n, axis, norm, out)
}

// IHFFT is the inverse of HFFT ("ihfft"): real x, the n/2+1 non-negative
// frequencies of IFFT (complex of x's precision), norm as for IFFT.
func IHFFT(o opcore.Owner, x *tensor.Tensor, n, axis int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fft1(o, fftKinds[5], x, n, axis, norm, out)
}

// FFTN is the n-dimensional transform over axes ("fftn"): FFT along each
// (nil: every axis; an axis may not repeat), with s[i] the length along
// axes[i] (nil: the axes' lengths; -1: that axis's length). s without axes
// means the last len(s) axes. The norm applies to the whole transform
// (n = prod(s)). Dtypes as for FFT.
func FFTN(o opcore.Owner, x *tensor.Tensor, s, axes []int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fftND(o, fftKinds[6], x, s, axes, norm, out)
}

// IFFTN is the n-dimensional inverse transform ("ifftn"). As FFTN.
func IFFTN(o opcore.Owner, x *tensor.Tensor, s, axes []int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fftND(o, fftKinds[7], x, s, axes, norm, out)
}

// RFFTN is the n-dimensional transform of real x ("rfftn"): RFFT along the
// last of axes, then FFT along the others. As FFTN otherwise.
func RFFTN(o opcore.Owner, x *tensor.Tensor, s, axes []int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fftND(o, fftKinds[8], x, s, axes, norm, out)
}

// IRFFTN is the inverse of RFFTN ("irfftn"): IFFT along all but the last
// of axes, then IRFFT along it; s[-1] is the real output's length there
// (nil or -1: 2*(m-1)). As FFTN otherwise.
func IRFFTN(o opcore.Owner, x *tensor.Tensor, s, axes []int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	return fftND(o, fftKinds[9], x, s, axes, norm, out)
}

// fftAxes resolves axes (nil: every axis, or the last len(s) when s is
// given) against rank, keeping their order.
func fftAxes(name string, axes, s []int, rank int) ([]int, error) {
	if axes == nil {
		n := rank
		if s != nil {
			n = len(s)
			if n > rank {
				return nil, core.Invalid("ops.%s: s %v has more entries than x has dimensions (%d)", name, s, rank)
			}
		}
		for a := rank - n; a < rank; a++ {
			axes = append(axes, a)
		}
		return axes, nil
	}
	return opcore.OrderedAxes(name, axes, rank)
}

// fftND builds every FFT op: 1-d ones come with one axis and s = [n or -1].
func fftND(o opcore.Owner, k fftKind, x *tensor.Tensor, s, axes []int, norm string, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, k.name, x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	var cd tensor.Dtype
	switch {
	case dt == tensor.Float32 || dt == tensor.Complex64 && !k.r2c:
		cd = tensor.Complex64
	case dt == tensor.Float64 || dt == tensor.Complex128 && !k.r2c:
		cd = tensor.Complex128
	case k.r2c:
		return op.Fail(op.Unsupported(dt, "float32, float64"))
	default:
		return op.Fail(op.Unsupported(dt, "complex64, complex128 (float32, float64 as complex)"))
	}
	if err := op.RequireDtypes(cd.Real()); err != nil {
		return op.Fail(err)
	}
	switch norm {
	case "", "backward", "ortho", "forward":
	default:
		return op.Fail(op.Errorf("norm %q: use \"backward\", \"ortho\" or \"forward\"", norm))
	}
	shape := x.Shape()
	if len(shape) == 0 {
		return op.Fail(op.Errorf("x is 0-d: a transform needs an axis"))
	}
	ax, err := fftAxes(k.name, axes, s, len(shape))
	if err != nil {
		return op.Fail(err)
	}
	if len(ax) == 0 {
		return op.Fail(op.Errorf("no axes to transform"))
	}
	if s != nil && len(s) != len(ax) {
		return op.Fail(op.Errorf("s %v and axes %v have different lengths", s, axes))
	}
	// Lengths per axis.
	lens := make([]int, len(ax))
	for i, a := range ax {
		n := -1
		if s != nil {
			n = s[i]
		}
		last := i == len(ax)-1
		switch {
		case n == -1 && k.c2r && last:
			n = 2 * (shape[a] - 1)
			if n < 1 {
				return op.Fail(op.Errorf("axis %d has %d elements: the default output length 2*(m-1) is %d; give the length", a, shape[a], n))
			}
		case n == -1:
			n = shape[a]
			if n < 1 {
				return op.Fail(op.Errorf("axis %d is empty: give a length >= 1", a))
			}
		case n < 1:
			return op.Fail(op.Errorf("length %d along axis %d: want >= 1", n, a))
		}
		lens[i] = n
	}
	total := 1
	for _, n := range lens {
		total *= n
	}
	// The 1-d passes, in NumPy's order: c2c from the last axis to the
	// first; r2c first along the last axis; c2r last along it.
	var steps []fftAxisSpec
	mk := func(i int) fftAxisSpec {
		return fftAxisSpec{axis: ax[i], n: lens[i], inverse: k.inverse, nout: lens[i]}
	}
	switch {
	case k.r2c:
		st := mk(len(ax) - 1)
		st.nout = st.n/2 + 1
		steps = append(steps, st)
		for i := 0; i < len(ax)-1; i++ {
			steps = append(steps, mk(i))
		}
	case k.c2r:
		for i := 0; i < len(ax)-1; i++ {
			steps = append(steps, mk(i))
		}
		st := mk(len(ax) - 1)
		st.herm, st.realOut = true, true
		steps = append(steps, st)
	default:
		for i := len(ax) - 1; i >= 0; i-- {
			steps = append(steps, mk(i))
		}
	}
	// The whole normalization goes to the last pass.
	for i := range steps {
		steps[i].scale = 1
	}
	steps[len(steps)-1].scale = fftScale(norm, total, k.inverse)
	oshape := slices.Clone(shape)
	for _, st := range steps {
		oshape[st.axis] = st.nout
	}
	odt := cd
	if k.c2r {
		odt = cd.Real()
	}
	y, err := op.Output(out, odt, oshape)
	if err != nil {
		return op.Fail(err)
	}
	if y.Len() == 0 {
		return op, nil
	}
	fb := newFFTBuilder(op, cd)
	src, cur := x, slices.Clone(shape)
	for i, st := range steps {
		cur[st.axis] = st.nout
		dst := y
		if i < len(steps)-1 {
			if dst, err = op.Temp(cd, slices.Clone(cur)); err != nil {
				return op.Fail(err)
			}
		}
		if err := fb.axis(src, dst, st); err != nil {
			return op.Fail(err)
		}
		src = dst
	}
	return op, nil
}

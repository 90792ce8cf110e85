package fft_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// The CPU reference of the FFT tests: direct O(n^2) DFTs in float64 along
// an axis, NumPy's crop and pad rules, and complex tensors to and from the
// host.

// cx is a host array: complex values (real ones have zero imaginary
// parts) in row-major order.
type cx struct {
	v     []complex128
	shape []int
}

func randomCx(shape []int, seed uint64, real bool) cx {
	r := rand.New(rand.NewPCG(seed, 7))
	n := numelOf(shape)
	v := make([]complex128, n)
	for i := range v {
		re := 2*r.Float64() - 1
		im := 0.0
		if !real {
			im = 2*r.Float64() - 1
		}
		v[i] = complex(re, im)
	}
	return cx{v: v, shape: shape}
}

// uploadCx makes a tensor of dt (complex or real: real parts only) from h.
func uploadCx(t *testing.T, m ops.Owner, dt tensor.Dtype, h cx) *tensor.Tensor {
	t.Helper()
	var x *tensor.Tensor
	var err error
	switch dt {
	case tensor.Complex64:
		v := make([]complex64, len(h.v))
		for i, c := range h.v {
			v[i] = complex64(c)
		}
		x, err = tensor.FromSlice(m, v, h.shape...)
	case tensor.Complex128:
		x, err = tensor.FromSlice(m, h.v, h.shape...)
	case tensor.Float32:
		v := make([]float32, len(h.v))
		for i, c := range h.v {
			v[i] = float32(real(c))
		}
		x, err = tensor.FromSlice(m, v, h.shape...)
	case tensor.Float64:
		v := make([]float64, len(h.v))
		for i, c := range h.v {
			v[i] = real(c)
		}
		x, err = tensor.FromSlice(m, v, h.shape...)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// rounded is h as uploaded in dt (what the GPU reads).
func rounded(h cx, dt tensor.Dtype) cx {
	out := cx{v: make([]complex128, len(h.v)), shape: h.shape}
	for i, c := range h.v {
		switch dt {
		case tensor.Complex64:
			out.v[i] = complex128(complex64(c))
		case tensor.Float32:
			out.v[i] = complex(float64(float32(real(c))), 0)
		case tensor.Float64:
			out.v[i] = complex(real(c), 0)
		default:
			out.v[i] = c
		}
	}
	return out
}

// downloadCx reads a complex or real tensor.
func downloadCx(t *testing.T, y *tensor.Tensor) cx {
	t.Helper()
	require.NoError(t, y.Wait(context.Background()))
	buf := make([]byte, y.Bytes())
	require.NoError(t, y.ReadBytes(buf))
	h := cx{v: make([]complex128, y.Len()), shape: y.Shape()}
	f32 := func(i int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))) }
	f64 := func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:])) }
	for i := range h.v {
		switch y.Dtype() {
		case tensor.Complex64:
			h.v[i] = complex(f32(2*i), f32(2*i+1))
		case tensor.Complex128:
			h.v[i] = complex(f64(2*i), f64(2*i+1))
		case tensor.Float32:
			h.v[i] = complex(f32(i), 0)
		case tensor.Float64:
			h.v[i] = complex(f64(i), 0)
		}
	}
	return h
}

// refRoot is exp(sign 2 pi i t/n), t in [0, n), with the angle taken
// into (-pi, pi] first.
func refRoot(t, n int, sign float64) complex128 {
	if 2*t > n {
		t -= n
	}
	s, c := math.Sincos(2 * math.Pi * float64(t) / float64(n))
	return complex(c, sign*s)
}

// ksum is a compensated (Neumaier) complex sum, so that the reference's
// own rounding stays far below the GPU's on long sums.
type ksum struct{ re, im, cre, cim float64 }

func (k *ksum) add(v complex128) {
	k.re, k.cre = neumaier(k.re, k.cre, real(v))
	k.im, k.cim = neumaier(k.im, k.cim, imag(v))
}

func (k *ksum) sum() complex128 { return complex(k.re+k.cre, k.im+k.cim) }

func neumaier(s, c, x float64) (float64, float64) {
	t := s + x
	if math.Abs(s) >= math.Abs(x) {
		c += (s - t) + x
	} else {
		c += (x - t) + s
	}
	return t, c
}

// dftBin is bin k of the forward (sign -1) or inverse DFT of x.
func dftBin(x []complex128, k int, sign float64) complex128 {
	n := len(x)
	var s ksum
	for j, v := range x {
		s.add(v * refRoot(int(uint64(j)*uint64(k)%uint64(n)), n, sign))
	}
	return s.sum()
}

// refAlong applies f to every row of h along axis: f gets the row (length
// shape[axis]) and returns the new row (length nout).
func refAlong(h cx, axis, nout int, f func([]complex128) []complex128) cx {
	m := h.shape[axis]
	outer, inner := numelOf(h.shape[:axis]), numelOf(h.shape[axis+1:])
	shape := append([]int(nil), h.shape...)
	shape[axis] = nout
	out := cx{v: make([]complex128, outer*nout*inner), shape: shape}
	row := make([]complex128, m)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			for k := range row {
				row[k] = h.v[(o*m+k)*inner+i]
			}
			r := f(row)
			for k := 0; k < nout; k++ {
				out.v[(o*nout+k)*inner+i] = r[k]
			}
		}
	}
	return out
}

// fitLen crops or zero pads row to n.
func fitLen(row []complex128, n int) []complex128 {
	out := make([]complex128, n)
	copy(out, row)
	return out
}

// dft is the direct DFT of x with sign (-1 forward), in float64.
func dft(x []complex128, sign float64) []complex128 {
	n := len(x)
	w := make([]complex128, n)
	for t := range w {
		w[t] = refRoot(t, n, sign)
	}
	y := make([]complex128, n)
	for k := range y {
		var s ksum
		for j, v := range x {
			s.add(v * w[j*k%n])
		}
		y[k] = s.sum()
	}
	return y
}

// hermExtend is the full length-n sequence whose first n/2+1 values are
// row's (cropped or zero padded) and whose others are conjugates.
func hermExtend(row []complex128, n int) []complex128 {
	h := fitLen(row, n/2+1)
	out := make([]complex128, n)
	for k := range out {
		if k <= n/2 {
			out[k] = h[k]
		} else {
			out[k] = complex(real(h[n-k]), -imag(h[n-k]))
		}
	}
	return out
}

// refFFT1 is NumPy's 1-d transform name (fft ifft rfft irfft hfft ihfft)
// of h along axis with length n and norm.
func refFFT1(name string, h cx, n, axis int, norm string) cx {
	inverse := name == "ifft" || name == "irfft" || name == "ihfft"
	sign := -1.0
	if inverse {
		sign = 1
	}
	scale := refScale(norm, n, inverse)
	nout := n
	if name == "rfft" || name == "ihfft" {
		nout = n/2 + 1
	}
	return refAlong(h, axis, nout, func(row []complex128) []complex128 {
		var x []complex128
		if name == "irfft" || name == "hfft" {
			x = hermExtend(row, n)
		} else {
			x = fitLen(row, n)
		}
		y := dft(x, sign)
		for k := range y {
			y[k] *= complex(scale, 0)
			if name == "irfft" || name == "hfft" {
				y[k] = complex(real(y[k]), 0)
			}
		}
		return y[:nout]
	})
}

func refScale(norm string, n int, inverse bool) float64 {
	switch {
	case norm == "ortho":
		return 1 / math.Sqrt(float64(n))
	case (norm == "forward") != inverse:
		return 1 / float64(n)
	}
	return 1
}

// relRMS is sqrt(sum |got-want|^2 / sum |want|^2) (the absolute RMS when
// want is zero).
func relRMS(got, want []complex128) float64 {
	var num, den float64
	for i := range want {
		d := got[i] - want[i]
		num += real(d)*real(d) + imag(d)*imag(d)
		den += real(want[i])*real(want[i]) + imag(want[i])*imag(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// fftTol is the relative RMS error allowed for a transform of length n in
// dt: 4e-8 (a third of float32's epsilon) or 1.5e-16 (1.35 float64
// epsilons) per log2 level, plus 4 levels for the table roundings and
// Bluestein's extra transforms. The worst measured is about half of it.
func fftTol(dt tensor.Dtype, n int) float64 {
	lg := float64(max(1, bits.Len(uint(n))))
	if dt == tensor.Complex64 || dt == tensor.Float32 {
		return 4e-8 * (lg + 4)
	}
	return 1.5e-16 * (lg + 4)
}

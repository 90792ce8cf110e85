package fft_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// callFFT runs op name on x with attributes and returns its output.
func callFFT(t *testing.T, m ops.Owner, name string, x *tensor.Tensor, at ops.Attrs) cx {
	t.Helper()
	outs, err := ops.Call(context.Background(), m, name, []*tensor.Tensor{x}, nil, at)
	require.NoError(t, err)
	defer outs[0].Close()
	return downloadCx(t, outs[0])
}

var fftDtypes = []tensor.Dtype{tensor.Complex64, tensor.Complex128}

// fftTestLengths: every length to 64, powers of two, primes, products of
// small primes (direct mixed radix) and of larger ones (Bluestein).
func fftTestLengths() []int {
	var ns []int
	for n := 1; n <= 64; n++ {
		ns = append(ns, n)
	}
	return append(ns, 96, 100, 121, 128, 210, 243, 256, 343, 625, 1000, 1009, 1024, 2048, 2310, 4093, 4096)
}

func TestFFTLengths(t *testing.T) {
	m, _ := testutil.Manager(t)
	worst := map[tensor.Dtype]float64{}
	for _, dt := range fftDtypes {
		for _, n := range fftTestLengths() {
			rows := 2
			if n > 1024 {
				rows = 1
			}
			h := rounded(randomCx([]int{rows, n}, uint64(n), false), dt)
			x := uploadCx(t, m, dt, h)
			for _, name := range []string{"fft", "ifft"} {
				got := callFFT(t, m, name, x, ops.Attrs{})
				want := refFFT1(name, h, n, 1, "backward")
				require.Equal(t, want.shape, got.shape)
				e := relRMS(got.v, want.v)
				worst[dt] = max(worst[dt], e/fftTol(dt, n))
				assert.LessOrEqual(t, e, fftTol(dt, n), "%s %v n=%d", name, dt, n)
			}
		}
	}
	t.Logf("worst error / tolerance: %v", worst)
}

// TestFFTLarge checks sampled bins of long transforms against the direct
// sum (each bin is O(n) on the host).
func TestFFTLarge(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, tc := range []struct {
		dt tensor.Dtype
		n  int
	}{
		{tensor.Complex64, 1 << 16}, {tensor.Complex64, 1 << 20}, {tensor.Complex128, 1 << 18},
		{tensor.Complex64, 65537}, {tensor.Complex128, 3 * 5 * 7 * 1024}, {tensor.Complex64, 1000003},
	} {
		t.Run(fmt.Sprintf("%v/%d", tc.dt, tc.n), func(t *testing.T) {
			h := rounded(randomCx([]int{tc.n}, 3, false), tc.dt)
			x := uploadCx(t, m, tc.dt, h)
			got := callFFT(t, m, "fft", x, ops.Attrs{})
			r := rand.New(rand.NewPCG(uint64(tc.n), 1))
			var g, w []complex128
			for range 48 {
				k := r.IntN(tc.n)
				g, w = append(g, got.v[k]), append(w, dftBin(h.v, k, -1))
			}
			e := relRMS(g, w)
			t.Logf("relative RMS error %.3g (tolerance %.3g)", e, fftTol(tc.dt, tc.n))
			assert.LessOrEqual(t, e, fftTol(tc.dt, tc.n))
		})
	}
}

// TestFFTRoundTrip: ifft(fft(x)) is x, for every norm pairing.
func TestFFTRoundTrip(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range fftDtypes {
		for _, n := range []int{1, 7, 64, 97, 1000} {
			for _, norm := range []string{"backward", "ortho", "forward"} {
				h := rounded(randomCx([]int{3, n}, uint64(n)+9, false), dt)
				x := uploadCx(t, m, dt, h)
				outs, err := ops.Call(context.Background(), m, "fft", []*tensor.Tensor{x}, nil, ops.Attrs{Norm: norm})
				require.NoError(t, err)
				back := callFFT(t, m, "ifft", outs[0], ops.Attrs{Norm: norm})
				require.NoError(t, outs[0].Close())
				assert.LessOrEqual(t, relRMS(back.v, h.v), 2*fftTol(dt, n), "%v n=%d %s", dt, n, norm)
			}
		}
	}
}

// TestFFTAxesAndLengths: every op, every norm, along the first, a middle
// and the last axis of a 3-d array, with the default length, crops and
// pads, odd and even.
func TestFFTAxesAndLengths(t *testing.T) {
	m, _ := testutil.Manager(t)
	shape := []int{4, 6, 5}
	for _, name := range []string{"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"} {
		realIn := name == "rfft" || name == "ihfft"
		for _, dt := range fftDtypes {
			in := dt
			if realIn {
				in = dt.Real()
			}
			h := rounded(randomCx(shape, 11, realIn), in)
			x := uploadCx(t, m, in, h)
			for _, axis := range []int{0, 1, -1} {
				a := (axis + 3) % 3
				for _, n := range []int{0, 1, 2, 3, 4, 8, 9, 11, 13} {
					for _, norm := range []string{"backward", "ortho", "forward"} {
						nn := n
						if n == 0 {
							nn = shape[a]
							if name == "irfft" || name == "hfft" {
								nn = 2 * (shape[a] - 1)
							}
						}
						got := callFFT(t, m, name, x, ops.Attrs{N: n, Axes: []int{axis}, Norm: norm})
						want := refFFT1(name, h, nn, a, norm)
						require.Equal(t, want.shape, got.shape, "%s %v axis %d n %d", name, dt, axis, n)
						assert.LessOrEqual(t, relRMS(got.v, want.v), fftTol(dt, nn), "%s %v axis %d n %d %s", name, dt, axis, n, norm)
					}
				}
			}
		}
	}
}

// refFFTN composes refFFT1 as NumPy's fftn, rfftn and irfftn do.
func refFFTN(name string, h cx, s, axes []int, norm string) cx {
	total := 1
	for _, n := range s {
		total *= n
	}
	one := map[string]string{"fftn": "fft", "ifftn": "ifft", "rfftn": "fft", "irfftn": "ifft"}[name]
	last := len(axes) - 1
	switch name {
	case "rfftn":
		h = refFFT1("rfft", h, s[last], axes[last], "backward")
		for i := 0; i < last; i++ {
			h = refFFT1(one, h, s[i], axes[i], "backward")
		}
	case "irfftn":
		for i := 0; i < last; i++ {
			h = refFFT1(one, h, s[i], axes[i], "backward")
		}
		h = refFFT1("irfft", h, s[last], axes[last], "backward")
	default:
		for i := last; i >= 0; i-- {
			h = refFFT1(one, h, s[i], axes[i], "backward")
		}
	}
	// Undo the per-axis "backward" scaling of inverse transforms, then
	// apply norm to the whole.
	inverse := name == "ifftn" || name == "irfftn"
	f := refScale(norm, total, inverse) / refScale("backward", total, inverse)
	for i := range h.v {
		h.v[i] *= complex(f, 0)
	}
	return h
}

func TestFFTN(t *testing.T) {
	m, _ := testutil.Manager(t)
	shape := []int{3, 4, 6}
	for _, tc := range []struct {
		s, axes []int // axes nil: all
	}{
		{nil, nil}, {[]int{5, 3}, []int{0, 2}}, {[]int{2, -1}, []int{2, 1}}, {[]int{7}, []int{1}},
		{[]int{3, 4, 6}, []int{0, 1, 2}}, {[]int{4, 9}, nil},
	} {
		for _, name := range []string{"fftn", "ifftn", "rfftn", "irfftn"} {
			for _, dt := range fftDtypes {
				in := dt
				if name == "rfftn" {
					in = dt.Real()
				}
				h := rounded(randomCx(shape, 5, name == "rfftn"), in)
				x := uploadCx(t, m, in, h)
				axes := tc.axes
				if axes == nil {
					axes = []int{0, 1, 2}
					if tc.s != nil {
						axes = axes[3-len(tc.s):]
					}
				}
				s := make([]int, len(axes))
				for i, a := range axes {
					s[i] = shape[a]
					if name == "irfftn" && i == len(axes)-1 {
						s[i] = 2 * (shape[a] - 1)
					}
					if tc.s != nil && tc.s[i] != -1 {
						s[i] = tc.s[i]
					}
				}
				for _, norm := range []string{"backward", "ortho", "forward"} {
					got := callFFT(t, m, name, x, ops.Attrs{S: tc.s, Axes: tc.axes, Norm: norm})
					want := refFFTN(name, h, s, axes, norm)
					require.Equal(t, want.shape, got.shape, "%s %v %v", name, tc.s, tc.axes)
					assert.LessOrEqual(t, relRMS(got.v, want.v), 2*fftTol(dt, 64), "%s %v s %v axes %v %s", name, dt, tc.s, tc.axes, norm)
				}
			}
		}
	}
}

// TestFFTRealInput: fft of a float32/float64 tensor is that of the complex
// tensor with zero imaginary parts.
func TestFFTRealInput(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		h := rounded(randomCx([]int{2, 30}, 4, true), dt)
		x := uploadCx(t, m, dt, h)
		got := callFFT(t, m, "fft", x, ops.Attrs{})
		assert.LessOrEqual(t, relRMS(got.v, refFFT1("fft", h, 30, 1, "").v), fftTol(dt, 30))
	}
}

func TestFFTErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	c := uploadCx(t, m, tensor.Complex64, randomCx([]int{2, 4}, 1, false))
	r := uploadCx(t, m, tensor.Float32, randomCx([]int{2, 4}, 1, true))
	one := uploadCx(t, m, tensor.Complex64, randomCx([]int{3, 1}, 1, false))
	i32, err := tensor.FromSlice(m, []int32{1, 2, 3})
	require.NoError(t, err)
	defer i32.Close()
	for _, tc := range []struct {
		name string
		x    *tensor.Tensor
		at   ops.Attrs
		msg  string
	}{
		{"fft", i32, ops.Attrs{}, "int32"},
		{"rfft", c, ops.Attrs{}, "complex64"},
		{"fft", c, ops.Attrs{Norm: "none"}, "norm"},
		{"fft", c, ops.Attrs{Axes: []int{2}}, "out of range"},
		{"fft", c, ops.Attrs{N: -3}, "n is -3"},
		{"fft", c, ops.Attrs{Axes: []int{0, 1}}, "one axis"},
		{"fftn", c, ops.Attrs{Axes: []int{1, -1}}, "repeated"},
		{"fftn", c, ops.Attrs{S: []int{2, 0}, Axes: []int{0, 1}}, "want >= 1"},
		{"fftn", c, ops.Attrs{S: []int{2}, Axes: []int{0, 1}}, "different lengths"},
		{"irfft", one, ops.Attrs{}, "2*(m-1)"},
		{"fft", r, ops.Attrs{S: []int{3}}, `attribute "s" is not one of the op's (it takes only axes, n, norm)`},
		{"fftn", c, ops.Attrs{N: 3}, `attribute "n" is not one of the op's (it takes only axes, norm, s)`},
	} {
		_, err := ops.Call(context.Background(), m, tc.name, []*tensor.Tensor{tc.x}, nil, tc.at)
		require.Error(t, err, "%s %+v", tc.name, tc.at)
		assert.ErrorIs(t, err, vkflow.ErrInvalid)
		assert.Contains(t, err.Error(), tc.msg)
	}
}

// TestFFTStream: eager calls that differ only in n, s or norm are
// different prepared ops (the stream's cache key holds them).
func TestFFTStream(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	h := rounded(randomCx([]int{2, 8}, 2, false), tensor.Complex64)
	x := uploadCx(t, m, tensor.Complex64, h)
	for _, at := range []ops.Attrs{{}, {N: 4}, {N: 12}, {Norm: "ortho"}, {Norm: "forward"}} {
		outs, err := s.Call("fft", []*tensor.Tensor{x}, nil, at)
		require.NoError(t, err)
		got := downloadCx(t, outs[0])
		require.NoError(t, outs[0].Close())
		n := 8
		if at.N != 0 {
			n = at.N
		}
		want := refFFT1("fft", h, n, 1, at.Norm)
		require.Equal(t, want.shape, got.shape, "%+v", at)
		assert.LessOrEqual(t, relRMS(got.v, want.v), fftTol(tensor.Complex64, n), "%+v", at)
	}
	for _, sv := range [][]int{{2, 8}, {3, 5}} {
		outs, err := s.Call("fftn", []*tensor.Tensor{x}, nil, ops.Attrs{S: sv})
		require.NoError(t, err)
		assert.Equal(t, sv, outs[0].Shape())
		require.NoError(t, outs[0].Close())
	}
}

// TestFFTParseAttrs: the C API's and Python's JSON keys for the FFTs.
func TestFFTParseAttrs(t *testing.T) {
	at, err := ops.ParseAttrs([]byte(`{"n": 8, "s": [4, -1], "norm": "ortho", "axes": [0, -1]}`))
	require.NoError(t, err)
	assert.Equal(t, ops.Attrs{N: 8, S: []int{4, -1}, Norm: "ortho", Axes: []int{0, -1}}, at)
}

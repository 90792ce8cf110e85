package ops

import (
	"math"

	"github.com/vkflow/vkflow/tensor"
)

// fftAxisSpec is one 1-d transform along an axis, as the FFT ops compose
// them.
type fftAxisSpec struct {
	axis    int     // non-negative
	n       int     // transform length (>= 1)
	inverse bool    // exp(+2 pi i jk/n)
	herm    bool    // x holds the first half of a Hermitian sequence (irfft, hfft)
	realOut bool    // y is the real part (irfft, hfft)
	nout    int     // y's length along axis: n, or n/2+1 (rfft, ihfft)
	scale   float64 // the normalization
}

// fftBuilder adds the dispatches of FFT passes to an Op, with the tables
// they read uploaded once per Op.
type fftBuilder struct {
	op   *Op
	cd   tensor.Dtype // Complex64 or Complex128: the work dtype
	tabs map[fftTableKey]*tensor.Tensor
}

func newFFTBuilder(op *Op, cd tensor.Dtype) *fftBuilder {
	return &fftBuilder{op: op, cd: cd, tabs: map[fftTableKey]*tensor.Tensor{}}
}

// table uploads host (interleaved complex, float64) as a complex tensor of
// the work dtype, once per key.
func (fb *fftBuilder) table(key fftTableKey, host []float64) (*tensor.Tensor, error) {
	if t, ok := fb.tabs[key]; ok {
		return t, nil
	}
	var t *tensor.Tensor
	var err error
	if fb.cd == tensor.Complex128 {
		t, err = tensor.FromSlice(fb.op.owner, host)
	} else {
		f := make([]float32, len(host))
		for i, v := range host {
			f[i] = float32(v)
		}
		t, err = tensor.FromSlice(fb.op.owner, f)
	}
	if err != nil {
		return nil, fb.op.errorf("twiddle table: %v", err)
	}
	fb.op.scratch = append(fb.op.scratch, t)
	fb.tabs[key] = t
	return t, nil
}

// axis adds the transform sp of x (its axis holds M elements, read up to
// n, or n/2+1 when herm) into y (its axis holds sp.nout).
func (fb *fftBuilder) axis(x, y *tensor.Tensor, sp fftAxisSpec) error {
	op := fb.op
	shape := x.Shape()
	m := shape[sp.axis]
	outer, inner := numel(shape[:sp.axis]), numel(shape[sp.axis+1:])
	rows := outer * inner
	if rows == 0 || sp.nout == 0 {
		return nil
	}
	factors := fftFactors(sp.n)
	blue := factors == nil
	l := sp.n
	if blue {
		l = bluesteinLength(sp.n)
		factors = fftFactors(l)
	}
	if uint64(rows)*uint64(l) >= 1<<32 || uint64(outer)*uint64(max(m, sp.nout))*uint64(inner) >= 1<<32 {
		return op.errorf("%d transforms of length %d exceed 2^32 elements of work", rows, l)
	}
	a, err := op.temp(fb.cd, []int{rows * l})
	if err != nil {
		return err
	}
	var bb *tensor.Tensor
	if len(factors) > 0 {
		if bb, err = op.temp(fb.cd, []int{rows * l}); err != nil {
			return err
		}
	}
	var chirp, filter *tensor.Tensor
	if blue {
		hc, hf := hostBluestein(sp.n, l, sp.inverse)
		if chirp, err = fb.table(fftTableKey{kind: 'c', n: sp.n, m: l, inverse: sp.inverse}, hc); err != nil {
			return err
		}
		if filter, err = fb.table(fftTableKey{kind: 'f', n: sp.n, m: l, inverse: sp.inverse}, hf); err != nil {
			return err
		}
	}
	// Load.
	nread := min(m, sp.n)
	if sp.herm {
		nread = min(m, sp.n/2+1)
	}
	total := uint64(rows) * uint64(l)
	groups, err := op.grid(total, localSize)
	if err != nil {
		return err
	}
	ts := []*tensor.Tensor{x, a}
	if blue {
		ts = append(ts, chirp)
	}
	realIn := !x.Dtype().IsComplex()
	if err := op.dispatch(fftLoadSource(fb.cd, realIn, sp.herm, blue), ts, groups,
		uint32(total), uint32(l), uint32(m), uint32(nread), uint32(inner), uint32(sp.n)); err != nil {
		return err
	}
	// Passes: the transform of length l, twice around the filter for
	// Bluestein.
	cur, other := a, bb
	passes := func(inverse bool) error {
		if len(factors) == 0 {
			return nil
		}
		tw, err := fb.table(fftTableKey{kind: 'w', n: l}, hostRoots(l))
		if err != nil {
			return err
		}
		ns := 1
		for _, r := range factors {
			cnt := total / uint64(r)
			g, err := op.grid(cnt, localSize)
			if err != nil {
				return err
			}
			if err := op.dispatch(fftPassSource(fb.cd, r, inverse), []*tensor.Tensor{cur, other, tw}, g,
				uint32(cnt), uint32(l), uint32(ns)); err != nil {
				return err
			}
			cur, other = other, cur
			ns *= r
		}
		return nil
	}
	if blue {
		if err := passes(false); err != nil {
			return err
		}
		if err := op.dispatch(fftScaleSource(fb.cd), []*tensor.Tensor{cur, filter}, groups,
			uint32(total), uint32(l)); err != nil {
			return err
		}
		if err := passes(true); err != nil {
			return err
		}
	} else if err := passes(sp.inverse); err != nil {
		return err
	}
	// Store.
	ototal := uint64(outer) * uint64(sp.nout) * uint64(inner)
	og, err := op.grid(ototal, localSize)
	if err != nil {
		return err
	}
	ts = []*tensor.Tensor{cur, y}
	if blue {
		ts = append(ts, chirp)
	}
	var scale any = float32(sp.scale)
	if fb.cd == tensor.Complex128 {
		scale = sp.scale
	}
	return op.dispatch(fftStoreSource(fb.cd, sp.realOut, blue), ts, og,
		scale, uint32(ototal), uint32(sp.nout), uint32(inner), uint32(l))
}

// fftScale is the normalization of a transform of length n: forward
// transforms (fft, rfft, hfft) scale by 1 ("backward"), 1/sqrt(n)
// ("ortho") or 1/n ("forward"); inverse ones (ifft, irfft, ihfft) by 1/n,
// 1/sqrt(n) or 1.
func fftScale(norm string, n int, inverse bool) float64 {
	switch {
	case norm == "ortho":
		return 1 / math.Sqrt(float64(n))
	case (norm == "forward") != inverse:
		return 1 / float64(n)
	}
	return 1
}

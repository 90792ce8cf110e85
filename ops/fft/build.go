package fft

import (
	"math"

	"github.com/vkflow/vkflow/ops/internal/opcore"
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
	op   *opcore.Op
	cd   tensor.Dtype // Complex64 or Complex128: the work dtype
	tabs map[fftTableKey]*tensor.Tensor
}

func newFFTBuilder(op *opcore.Op, cd tensor.Dtype) *fftBuilder {
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
		t, err = tensor.FromSlice(fb.op.Owner(), host)
	} else {
		f := make([]float32, len(host))
		for i, v := range host {
			f[i] = float32(v)
		}
		t, err = tensor.FromSlice(fb.op.Owner(), f)
	}
	if err != nil {
		return nil, fb.op.Errorf("twiddle table: %v", err)
	}
	fb.op.Adopt(t)
	fb.tabs[key] = t
	return t, nil
}

// axis adds the transform sp of x (its axis holds M elements, read up to
// n, or n/2+1 when herm) into y (its axis holds sp.nout).
func (fb *fftBuilder) axis(x, y *tensor.Tensor, sp fftAxisSpec) error {
	op := fb.op
	shape := x.Shape()
	m := shape[sp.axis]
	outer, inner := opcore.Numel(shape[:sp.axis]), opcore.Numel(shape[sp.axis+1:])
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
		return op.Errorf("%d transforms of length %d exceed 2^32 elements of work", rows, l)
	}
	// Work buffers for the results between dispatches: one pass per
	// factor (one for length 1), twice for Bluestein; the first reads x
	// and the last writes y.
	dispatches := max(1, len(factors))
	if blue {
		dispatches *= 2
	}
	var a, bb *tensor.Tensor
	var err error
	if dispatches > 1 {
		if a, err = op.Temp(fb.cd, []int{rows * l}); err != nil {
			return err
		}
	}
	if dispatches > 2 {
		if bb, err = op.Temp(fb.cd, []int{rows * l}); err != nil {
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
	realIn := !x.Dtype().IsComplex()
	nread := min(m, sp.n)
	if sp.herm {
		nread = min(m, sp.n/2+1)
	}
	var tw *tensor.Tensor
	if len(factors) > 0 {
		if tw, err = fb.table(fftTableKey{kind: 'w', n: l}, hostRoots(l)); err != nil {
			return err
		}
	}
	var scale any = float32(sp.scale)
	if fb.cd == tensor.Complex128 {
		scale = sp.scale
	}
	total := uint64(rows) * uint64(l)
	// run adds the passes of one transform of length l; first: the first
	// pass reads x, last: the last pass writes y.
	src := x
	run := func(inverse, first, last bool) error {
		fs := factors
		if len(fs) == 0 {
			fs = []int{1} // length 1: one pass that loads and stores
		}
		ns := 1
		for pi, r := range fs {
			p := fftPass{cd: fb.cd, radix: r, inverse: inverse}
			if first && pi == 0 {
				p.load, p.realIn, p.herm, p.chirpIn = true, realIn, sp.herm, blue
			}
			out := a
			if src == a {
				out = bb
			}
			if pi == len(fs)-1 {
				if last {
					p.store, p.realOut, p.chirpOut = true, sp.realOut, blue
					out = y
				}
				p.filter = blue && !inverse
			}
			ts := []*tensor.Tensor{src, out}
			for _, name := range p.tables() {
				ts = append(ts, map[string]*tensor.Tensor{"tw": tw, "ch": chirp, "f": filter}[name])
			}
			cnt := total / uint64(r)
			g, err := op.Grid(cnt, opcore.LocalSize)
			if err != nil {
				return err
			}
			if err := op.Dispatch(p.source(), ts, g, scale, uint32(cnt), uint32(l), uint32(ns),
				uint32(m), uint32(nread), uint32(inner), uint32(sp.n), uint32(sp.nout)); err != nil {
				return err
			}
			src = out
			ns *= r
		}
		return nil
	}
	if blue {
		if err := run(false, true, false); err != nil {
			return err
		}
		return run(true, false, true)
	}
	return run(sp.inverse, true, true)
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

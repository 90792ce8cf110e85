package opcore_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// The gradient check: for random inputs, a random cotangent c and a
// random direction v per input, the VJP's gradient must give the
// directional derivative of L = Re Σ conj(c)·f(x) that central finite
// differences measure: Re Σ conj(grad)·v (float64 and complex128).

// gin describes one input of a gradient case.
type gin struct {
	shape  []int
	lo, hi float64 // the values' range (|x| in [lo, hi] when signed)
	signed bool    // random sign on |x| in [lo, hi]
	cplx   bool    // complex128
	fixed  []float64
	dtype  tensor.Dtype // an input with no gradient (bool, int64) from fixed
	diag   float64      // added to the diagonal of each matrix (the last two axes)
}

type gcase struct {
	op   string
	name string
	in   []gin
	at   ops.Attrs
	out  int // the output whose cotangent is random (the others get none)
}

func rin(shape ...int) gin  { return gin{shape: shape, lo: -1, hi: 1} }
func pos(shape ...int) gin  { return gin{shape: shape, lo: 0.5, hi: 2} }
func away(shape ...int) gin { return gin{shape: shape, lo: 0.2, hi: 1, signed: true} }
func rng(lo, hi float64, shape ...int) gin {
	return gin{shape: shape, lo: lo, hi: hi}
}
func cxIn(shape ...int) gin { return gin{shape: shape, lo: 0.3, hi: 1.2, signed: true, cplx: true} }

// hostData is one input's values as complex128 (the real part for float64).
type hostData []complex128

func (g gin) make(rnd *rand.Rand) hostData {
	n := 1
	for _, d := range g.shape {
		n *= d
	}
	v := make(hostData, n)
	for i := range v {
		if g.fixed != nil {
			v[i] = complex(g.fixed[i], 0)
			continue
		}
		draw := func() float64 {
			x := g.lo + (g.hi-g.lo)*rnd.Float64()
			if g.signed && rnd.IntN(2) == 0 {
				x = -x
			}
			return x
		}
		if g.cplx {
			v[i] = complex(draw(), draw())
		} else {
			v[i] = complex(draw(), 0)
		}
	}
	if g.diag != 0 && len(g.shape) >= 2 {
		r, c := g.shape[len(g.shape)-2], g.shape[len(g.shape)-1]
		for i := range v {
			if k := i % (r * c); k/c == k%c {
				v[i] += complex(g.diag, 0)
			}
		}
	}
	return v
}

func (g gin) dt() tensor.Dtype {
	switch {
	case g.dtype != 0:
		return g.dtype
	case g.cplx:
		return tensor.Complex128
	}
	return tensor.Float64
}

func putHost(t testing.TB, m *vkflow.Manager, dt tensor.Dtype, shape []int, v hostData) *tensor.Tensor {
	x, err := tensor.New(m, dt, shape)
	require.NoError(t, err)
	buf := make([]byte, len(v)*dt.Size())
	for i, c := range v {
		switch dt {
		case tensor.Float64:
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(real(c)))
		case tensor.Complex128:
			binary.LittleEndian.PutUint64(buf[16*i:], math.Float64bits(real(c)))
			binary.LittleEndian.PutUint64(buf[16*i+8:], math.Float64bits(imag(c)))
		case tensor.Int64:
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(int64(real(c))))
		case tensor.Bool:
			if real(c) != 0 {
				buf[i] = 1
			}
		default:
			t.Fatalf("upload: dtype %v", dt)
		}
	}
	require.NoError(t, x.WriteBytes(buf))
	t.Cleanup(func() { _ = x.Close() })
	return x
}

func readHost(t testing.TB, x *tensor.Tensor) hostData {
	require.NoError(t, x.Wait(context.Background()))
	buf := make([]byte, x.Bytes())
	require.NoError(t, x.ReadBytes(buf))
	v := make(hostData, x.Len())
	for i := range v {
		switch x.Dtype() {
		case tensor.Float64:
			v[i] = complex(math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:])), 0)
		case tensor.Complex128:
			v[i] = complex(math.Float64frombits(binary.LittleEndian.Uint64(buf[16*i:])),
				math.Float64frombits(binary.LittleEndian.Uint64(buf[16*i+8:])))
		default:
			t.Fatalf("download: dtype %v", x.Dtype())
		}
	}
	return v
}

// redot is Re Σ conj(a)·b.
func redot(a, b hostData) float64 {
	s := 0.0
	for i := range a {
		s += real(cmplx.Conj(a[i]) * b[i])
	}
	return s
}

// checkGrad runs one case and returns an error describing a mismatch.
func checkGrad(t testing.TB, m *vkflow.Manager, s *ops.Stream, c gcase, seed uint64) error {
	rnd := rand.New(rand.NewPCG(seed, 7))
	vals := make([]hostData, len(c.in))
	ins := make([]*tensor.Tensor, len(c.in))
	for i, g := range c.in {
		vals[i] = g.make(rnd)
		ins[i] = putHost(t, m, g.dt(), g.shape, vals[i])
	}
	outs, err := s.Call(c.op, ins, nil, c.at)
	if err != nil {
		return err
	}
	for _, o := range outs {
		t.Cleanup(func() { _ = o.Close() })
	}
	y := outs[c.out]
	yv := readHost(t, y)
	cot := make(hostData, len(yv))
	for i := range cot {
		if y.Dtype().IsComplex() {
			cot[i] = complex(rnd.Float64()*2-1, rnd.Float64()*2-1)
		} else {
			cot[i] = complex(rnd.Float64()*2-1, 0)
		}
	}
	ct := putHost(t, m, y.Dtype(), y.Shape(), cot)
	cots := make([]*tensor.Tensor, len(outs))
	cots[c.out] = ct
	grads, err := s.VJP(c.op, ins, outs, cots, c.at, nil)
	if err != nil {
		return err
	}
	loss := func(k int, x hostData) (float64, error) {
		in2 := append([]*tensor.Tensor(nil), ins...)
		in2[k] = putHost(t, m, c.in[k].dt(), c.in[k].shape, x)
		o, err := s.Call(c.op, in2, nil, c.at)
		if err != nil {
			return 0, err
		}
		for _, x := range o {
			defer x.Close()
		}
		return redot(cot, readHost(t, o[c.out])), nil
	}
	const eps = 1e-6
	for k, g := range c.in {
		if g.dtype != 0 {
			if grads[k] != nil {
				return fmt.Errorf("input %d (%v) got a gradient", k, g.dtype)
			}
			continue
		}
		if grads[k] == nil {
			return fmt.Errorf("input %d got no gradient", k)
		}
		defer grads[k].Close()
		require.Equal(t, g.shape, grads[k].Shape(), "gradient %d's shape", k)
		require.Equal(t, g.dt(), grads[k].Dtype(), "gradient %d's dtype", k)
		gv := readHost(t, grads[k])
		dir := gin{shape: g.shape, lo: -1, hi: 1, cplx: g.cplx}.make(rnd)
		plus, minus := make(hostData, len(dir)), make(hostData, len(dir))
		for i := range dir {
			plus[i] = vals[k][i] + complex(eps, 0)*dir[i]
			minus[i] = vals[k][i] - complex(eps, 0)*dir[i]
		}
		lp, err := loss(k, plus)
		if err != nil {
			return err
		}
		lm, err := loss(k, minus)
		if err != nil {
			return err
		}
		num := (lp - lm) / (2 * eps)
		ana := redot(gv, dir)
		if math.IsNaN(ana) || math.Abs(ana-num) > 1e-6+1e-5*math.Abs(num) {
			return fmt.Errorf("input %d: VJP gives %.12g, finite differences %.12g", k, ana, num)
		}
	}
	return nil
}

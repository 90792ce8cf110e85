package kernels_test

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// randoms returns n float32 values in [-100, 100) with full random
// mantissas. Products and sums of two of them are normal numbers, so the
// GPU's correctly rounded results equal Go's.
func randoms(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = rng.Float32()*200 - 100
	}
	return out
}

func newTensor(t *testing.T, m *vkflow.Manager, data []float32) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromSlice(m, data)
	require.NoError(t, err)
	return x
}

func floats(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	require.NoError(t, err)
	return append([]float32(nil), v...)
}

// equal compares exactly and reports only the first difference.
func equal(t *testing.T, want, got []float32, msgAndArgs ...any) {
	t.Helper()
	require.Len(t, got, len(want), msgAndArgs...)
	for i := range want {
		if want[i] != got[i] {
			assert.Fail(t, fmt.Sprintf("element %d of %d is %v, want %v", i, len(want), got[i], want[i]), msgAndArgs...)
			return
		}
	}
}

func closeAll(t *testing.T, cs ...interface{ Close() error }) {
	t.Helper()
	for _, c := range cs {
		require.NoError(t, c.Close())
	}
}

func TestElementwise(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	type ctor func(kernels.Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*algorithm.Algorithm, error)
	mul := func(a, b float32) float32 { return a * b }
	add := func(a, b float32) float32 { return a + b }
	tests := []struct {
		name   string
		ctor   ctor
		op     func(a, b float32) float32
		n      int
		local  uint32
		groups uint32
	}{
		{"Multiply vec4", kernels.Multiply, mul, 4096, 256, 4},
		{"Multiply scalar", kernels.Multiply, mul, 4095, 64, 64},
		{"Multiply vec4, partial workgroup", kernels.Multiply, mul, 4100, 256, 5},
		{"Multiply one element", kernels.Multiply, mul, 1, 64, 1},
		{"Multiply four elements", kernels.Multiply, mul, 4, 256, 1},
		{"MultiplyScalar, multiple of 4", kernels.MultiplyScalar, mul, 4096, 64, 64},
		{"MultiplyScalar odd", kernels.MultiplyScalar, mul, 4095, 64, 64},
		{"Add vec4", kernels.Add, add, 4096, 256, 4},
		{"Add scalar", kernels.Add, add, 4095, 64, 64},
		{"Add scalar, partial workgroup", kernels.Add, add, 65, 64, 2},
		{"Add three elements", kernels.Add, add, 3, 64, 1},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			av, bv := randoms(rng, tt.n), randoms(rng, tt.n)
			a, b := newTensor(t, m, av), newTensor(t, m, bv)
			out, err := tensor.New(m, tensor.Float32, []int{tt.n})
			require.NoError(t, err)
			algo, err := tt.ctor(m, a, b, out)
			require.NoError(t, err)
			assert.Equal(t, [3]uint32{tt.local, 1, 1}, algo.LocalSize())
			assert.Equal(t, [3]uint32{tt.groups, 1, 1}, algo.Workgroups())
			assert.Zero(t, algo.PushSize())
			assert.Equal(t, []algorithm.Access{algorithm.ReadOnly, algorithm.ReadOnly, algorithm.WriteOnly},
				[]algorithm.Access{algo.Access(0), algo.Access(1), algo.Access(2)})
			seq, err := sequence.New(m, 0)
			require.NoError(t, err)
			require.NoError(t, seq.SyncDevice(a, b).Dispatch(algo).SyncLocal(out).Eval(ctx))
			want := make([]float32, tt.n)
			for i := range want {
				want[i] = tt.op(av[i], bv[i])
			}
			equal(t, want, floats(t, out))
			closeAll(t, seq, algo, a, b, out)
		})
	}
}

// In place: out is one of the inputs; each invocation reads its elements
// before writing them.
func TestElementwiseInPlace(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{4096, 4095} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			av, bv := randoms(rng, n), randoms(rng, n)
			a, b := newTensor(t, m, av), newTensor(t, m, bv)
			mul, err := kernels.Multiply(m, a, b, a)
			require.NoError(t, err)
			add, err := kernels.Add(m, a, b, b)
			require.NoError(t, err)
			seq, err := sequence.New(m, 0)
			require.NoError(t, err)
			// a = a*b, then b = a*b + b.
			require.NoError(t, seq.Dispatch(mul).Dispatch(add).SyncLocal(a, b).Eval(ctx))
			wa, wb := make([]float32, n), make([]float32, n)
			for i := range wa {
				wa[i] = av[i] * bv[i]
				wb[i] = wa[i] + bv[i]
			}
			equal(t, wa, floats(t, a))
			equal(t, wb, floats(t, b))
			closeAll(t, seq, mul, add, a, b)
		})
	}
}

// fma returns alpha*x + y rounded once to float32.
func fma(alpha, x, y float32) float32 {
	p := new(big.Float).SetPrec(256).SetFloat64(float64(alpha))
	p.Mul(p, new(big.Float).SetPrec(256).SetFloat64(float64(x)))
	p.Add(p, new(big.Float).SetPrec(256).SetFloat64(float64(y)))
	f, _ := p.Float32()
	return f
}

func TestSaxpy(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	// exact inputs: multiples of 1/4 below 256, so alpha*x + y is exact
	// whether or not the driver fuses it.
	exact := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(rng.IntN(2048)-1024) / 4
		}
		return out
	}
	tests := []struct {
		name  string
		n     int
		gen   func(int) []float32
		alpha []float32 // one dispatch each, in one sequence
		fused bool      // accept a fused multiply-add result too
	}{
		{"exact", 4096, exact, []float32{2.5}, false},
		{"exact odd length", 4095, exact, []float32{-0.75}, false},
		{"alpha 0", 1000, exact, []float32{0}, false},
		{"alpha 1 then -1", 333, exact, []float32{1, -1}, false},
		{"three dispatches", 129, exact, []float32{0.5, 2, -3}, false},
		{"one element", 1, exact, []float32{4}, false},
		{"random values", 4097, func(n int) []float32 { return randoms(rng, n) }, []float32{1.2345678}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xv, yv := tt.gen(tt.n), tt.gen(tt.n)
			x, y := newTensor(t, m, xv), newTensor(t, m, yv)
			algo, err := kernels.Saxpy(m, x, y)
			require.NoError(t, err)
			assert.Equal(t, 4, algo.PushSize())
			assert.Equal(t, [3]uint32{64, 1, 1}, algo.LocalSize())
			assert.Equal(t, algorithm.ReadOnly, algo.Access(0))
			assert.Equal(t, algorithm.ReadWrite, algo.Access(1))
			seq, err := sequence.New(m, 0)
			require.NoError(t, err)
			for _, alpha := range tt.alpha {
				seq.Dispatch(algo, alpha)
			}
			require.NoError(t, seq.SyncLocal(y).Eval(ctx))
			got := floats(t, y)
			if !tt.fused {
				want := append([]float32(nil), yv...)
				for _, alpha := range tt.alpha {
					for i := range want {
						want[i] = alpha*xv[i] + want[i]
					}
				}
				equal(t, want, got)
			} else {
				require.Len(t, tt.alpha, 1)
				alpha := tt.alpha[0]
				for i := range got {
					p := alpha * xv[i] // rounded: float32 * float32 is not fused with the add below
					split := p + yv[i]
					if got[i] != split && got[i] != fma(alpha, xv[i], yv[i]) {
						t.Fatalf("y[%d] = %v, want %v or, fused, %v", i, got[i], split, fma(alpha, xv[i], yv[i]))
					}
				}
			}
			// Submitting again applies the same dispatches again.
			require.NoError(t, seq.Eval(ctx))
			if !tt.fused {
				want := append([]float32(nil), got...)
				for _, alpha := range tt.alpha {
					for i := range want {
						want[i] = alpha*xv[i] + want[i]
					}
				}
				equal(t, want, floats(t, y), "second submit")
			}
			closeAll(t, seq, algo, x, y)
		})
	}
}

func TestKernelErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	other, _ := testutil.Manager(t)
	f4 := newTensor(t, m, []float32{1, 2, 3, 4})
	f3 := newTensor(t, m, []float32{1, 2, 3})
	i4, err := tensor.FromSlice(m, []int32{1, 2, 3, 4})
	require.NoError(t, err)
	foreign := newTensor(t, other, []float32{1, 2, 3, 4})
	closed := newTensor(t, m, []float32{1, 2, 3, 4})
	require.NoError(t, closed.Close())
	type ctor func(kernels.Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*algorithm.Algorithm, error)
	saxpy := func(o kernels.Owner, a, b, _ *tensor.Tensor) (*algorithm.Algorithm, error) {
		return kernels.Saxpy(o, a, b)
	}
	ctors := []struct {
		name string
		ctor ctor
	}{
		{"Multiply", kernels.Multiply},
		{"MultiplyScalar", kernels.MultiplyScalar},
		{"Add", kernels.Add},
		{"Saxpy", saxpy},
	}
	tests := []struct {
		name    string
		a, b, o *tensor.Tensor
		is      error
	}{
		{"mismatched dtypes", f4, i4, f4, vkflow.ErrInvalid},
		{"int32 everywhere", i4, i4, i4, vkflow.ErrInvalid},
		{"size mismatch", f4, f3, f4, vkflow.ErrInvalid},
		{"nil tensor", f4, nil, f4, vkflow.ErrInvalid},
		{"closed tensor", f4, closed, f4, vkflow.ErrClosed},
		{"tensor of another manager", f4, foreign, f4, vkflow.ErrInvalid},
	}
	for _, c := range ctors {
		for _, tt := range tests {
			if c.name == "Saxpy" && tt.o != f4 {
				continue
			}
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				algo, err := c.ctor(m, tt.a, tt.b, tt.o)
				assert.Nil(t, algo)
				assert.ErrorIs(t, err, tt.is)
			})
		}
		t.Run(c.name+"/output size mismatch", func(t *testing.T) {
			_, err := c.ctor(m, f3, f4, f3)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
		})
	}
	_, err = kernels.Add(nil, f4, f4, f4)
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "nil owner")
}

// logRegStep is the CPU version of shaders/logreg_grad.comp + logreg_update.comp, in float64: the mean
// gradient over m samples, the loss under the weights before the update,
// with p clamped to [1e-7, 1-1e-7] only inside the logarithms.
func logRegStep(x, y, w []float64, b float64, m, d int, lr float64) (nw []float64, nb, loss float64) {
	gw := make([]float64, d)
	var gb, l float64
	for i := range m {
		z := b
		for k := range d {
			z += w[k] * x[i*d+k]
		}
		p := 1 / (1 + math.Exp(-z))
		diff := p - y[i]
		for k := range d {
			gw[k] += diff * x[i*d+k]
		}
		gb += diff
		pl := min(max(p, 1e-7), 1-1e-7)
		l -= y[i]*math.Log(pl) + (1-y[i])*math.Log(1-pl)
	}
	nw = make([]float64, d)
	if m == 0 {
		copy(nw, w)
		return nw, b, 0
	}
	for k := range d {
		nw[k] = w[k] - lr*gw[k]/float64(m)
	}
	return nw, b - lr*gb/float64(m), l / float64(m)
}

// near reports whether got is within tol of want, relative to max(1, |want|).
func near(got float32, want, tol float64) bool {
	return math.Abs(float64(got)-want) <= tol*max(1, math.Abs(want))
}

package opcore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// refLogRegStep is one gradient-descent step in float64: the new weights
// and bias, and the mean loss before the step.
func refLogRegStep(x, y, w []float64, b float64, m, d int, lr float64) ([]float64, float64, float64) {
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
	nw := make([]float64, d)
	for k := range d {
		nw[k] = w[k] - lr*gw[k]/float64(m)
	}
	return nw, b - lr*gb/float64(m), l / float64(m)
}

// logRegData makes m samples of d features in [-1.5, 1.5) labelled by a
// random linear rule plus noise, and starting weights.
func logRegData(m, d int) (x, y, w []float64) {
	rng := rand.New(rand.NewPCG(uint64(m), uint64(d)))
	x = make([]float64, m*d)
	for i := range x {
		x[i] = float64(float32(rng.Float64()*3 - 1.5))
	}
	truth := make([]float64, d)
	for k := range truth {
		truth[k] = (rng.Float64()*2 - 1) / math.Sqrt(float64(d))
	}
	y = make([]float64, m)
	for i := range y {
		z := rng.NormFloat64() * 0.3
		for k := range truth {
			z += truth[k] * x[i*d+k]
		}
		if z > 0 {
			y[i] = 1
		}
	}
	w = make([]float64, d)
	for k := range w {
		w[k] = float64(float32(float64(k%3) * 0.1 * float64(1-2*(k%2))))
	}
	return x, y, w
}

// near reports whether got is within tol of want, relative to max(1, |want|).
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*max(1, math.Abs(want))
}

func TestLogRegStep(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const lr = 0.5
	for _, d := range []int{1, 16, 100} {
		for _, n := range []int{1, 4097, 100000} {
			const steps = 3
			t.Run(fmt.Sprintf("d=%d m=%d", d, n), func(t *testing.T) {
				xv, yv, wv := logRegData(n, d)
				f32 := tensor.Float32
				x, y := linTensor(t, m, f32, xv, []int{n, d}), linTensor(t, m, f32, yv, []int{n})
				w, b := linTensor(t, m, f32, wv, []int{d}), linTensor(t, m, f32, []float64{0.2}, []int{1})
				loss := linTensor(t, m, f32, []float64{-1}, []int{1})
				losses := linTensor(t, m, f32, make([]float64, steps), []int{steps})
				step, err := ops.LogRegStep(m, x, y, w, b, loss)
				require.NoError(t, err)
				defer step.Close()
				rows := 256 * max(1, min(8, 1024/d))
				assert.Equal(t, (n+rows-1)/rows, step.Groups())
				seq, err := sequence.New(m, 0)
				require.NoError(t, err)
				defer seq.Close()
				for s := range steps {
					step.Record(seq, lr).Copy(loss, losses, sequence.Region{Src: 0, Dst: s, Len: 1})
				}
				require.NoError(t, seq.SyncLocal(w, b, loss, losses).Eval(ctx))

				cw, cb := wv, 0.2
				cl := make([]float64, steps)
				for s := range steps {
					cw, cb, cl[s] = refLogRegStep(xv, yv, cw, cb, n, d, lr)
				}
				// float32 sums: a prediction sums d products; a gradient
				// sums up to 256 terms per invocation, an 8-level tree, and
				// in the second pass slots/256 terms and another tree: a
				// relative error of about (256+d+16)·6e-8 <= 2.3e-5 of the
				// sum of magnitudes, a few ulps more from exp and log. 1e-4
				// (relative above 1) over 3 steps leaves room for that and
				// catches a sum that misses one sample in 10,000.
				const tol = 1e-4
				gw, gb, gl, gls := linRead(t, w), linRead(t, b), linRead(t, loss), linRead(t, losses)
				for k := range cw {
					if !near(gw[k], cw[k], tol) {
						assert.Failf(t, "wrong weight", "w[%d] = %v, want %v", k, gw[k], cw[k])
						break
					}
				}
				assert.True(t, near(gb[0], cb, tol), "b = %v, want %v", gb[0], cb)
				assert.True(t, near(gl[0], cl[steps-1], tol), "loss = %v, want %v", gl[0], cl[steps-1])
				for s := range cl {
					assert.True(t, near(gls[s], cl[s], tol), "loss of step %d = %v, want %v", s, gls[s], cl[s])
				}
				if n > 1 {
					assert.Less(t, gls[steps-1], gls[0], "training lowers the loss")
				}
			})
		}
	}
}

// Steps in a graph: two steps as four nodes, run twice.
func TestLogRegGraph(t *testing.T) {
	m, _ := testutil.Manager(t)
	const n, d, lr = 1000, 20, 0.5
	xv, yv, wv := logRegData(n, d)
	f32 := tensor.Float32
	x, y := linTensor(t, m, f32, xv, []int{n, d}), linTensor(t, m, f32, yv, []int{n})
	w, b := linTensor(t, m, f32, wv, []int{d}), linTensor(t, m, f32, []float64{0}, []int{1})
	loss := linTensor(t, m, f32, []float64{0}, []int{1})
	step, err := ops.LogRegStep(m, x, y, w, b, loss)
	require.NoError(t, err)
	defer step.Close()
	g, err := graph.New(m)
	require.NoError(t, err)
	step.AddTo(g, lr)
	step.AddTo(g, lr)
	gotW := make([]float32, d)
	g.Download(w, gotW)
	exec, err := g.Compile()
	require.NoError(t, err)
	defer exec.Close()
	require.NoError(t, exec.Run(context.Background()))
	require.NoError(t, exec.Run(context.Background()))
	cw, cb := wv, 0.0
	for range 4 {
		cw, cb, _ = refLogRegStep(xv, yv, cw, cb, n, d, lr)
	}
	for k := range cw {
		assert.True(t, near(float64(gotW[k]), cw[k], 1e-4), "w[%d] = %v, want %v", k, gotW[k], cw[k])
	}
	assert.True(t, near(linRead(t, b)[0], cb, 1e-4))
}

func TestLogRegStepErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	other, _ := testutil.Manager(t)
	const n, d = 10, 3
	f := func(k int) *tensor.Tensor { return linTensor(t, m, tensor.Float32, make([]float64, k), []int{k}) }
	x, y, w, b, loss := f(n*d), f(n), f(d), f(1), f(1)
	closed := f(1)
	require.NoError(t, closed.Close())
	yInt := linTensor(t, m, tensor.Int32, make([]float64, n), []int{n})
	foreign := linTensor(t, other, tensor.Float32, make([]float64, d), []int{d})
	big := ops.LogRegMaxFeatures + 1
	shared := f(1)
	tests := []struct {
		name             string
		x, y, w, b, loss *tensor.Tensor
		is               error
		msg              string
	}{
		{"too many features", f(big), f(1), f(big), b, loss, vkflow.ErrInvalid, "features"},
		{"x one element short", f(n*d - 1), y, w, b, loss, vkflow.ErrInvalid, "size mismatch"},
		{"x sized for another m", f((n + 1) * d), y, w, b, loss, vkflow.ErrInvalid, "size mismatch"},
		{"labels of dtype int32", x, yInt, w, b, loss, vkflow.ErrInvalid, "int32"},
		{"two biases", x, y, w, f(2), loss, vkflow.ErrInvalid, "one element"},
		{"two losses", x, y, w, b, f(2), vkflow.ErrInvalid, "one element"},
		{"nil loss", x, y, w, b, nil, vkflow.ErrInvalid, "nil"},
		{"closed bias", x, y, w, closed, loss, vkflow.ErrClosed, ""},
		{"w of another manager", x, y, foreign, b, loss, vkflow.ErrInvalid, "another Manager"},
		{"loss is y", f(d), shared, w, b, shared, vkflow.ErrInvalid, "shares memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, err := ops.LogRegStep(m, tt.x, tt.y, tt.w, tt.b, tt.loss)
			assert.Nil(t, step)
			require.ErrorIs(t, err, tt.is)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	var nilStep *ops.LogReg
	assert.NoError(t, nilStep.Close())
}

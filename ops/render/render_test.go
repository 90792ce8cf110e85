package render_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opstest"
	"github.com/vkflow/vkflow/ops/render"
	"github.com/vkflow/vkflow/tensor"
)

// rendered is a scene's render on the GPU, recorded on a tape and
// differentiated: the forward and backward Execs, the image, the
// cotangent (the loss's weights) and the gradients.
type rendered struct {
	fwd, bwd    *graph.Exec
	img, dy     *tensor.Tensor
	tri, rgba   *tensor.Tensor
	gtri, grgba *tensor.Tensor
	saved       uint64
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// build records s's render with opt on a tape over m (two logical
// queues) and its backward graph with cotangent weights.
func build(t *testing.T, m *vkflow.Manager, dt tensor.Dtype, s scene, opt render.Options, weights []float64) *rendered {
	t.Helper()
	r := &rendered{}
	r.tri = opstest.LinTensor(t, m, dt, s.tri, []int{s.n, 3, 2})
	r.rgba = opstest.LinTensor(t, m, dt, s.rgba, []int{s.n, 4})
	r.dy = opstest.LinTensor(t, m, dt, weights, []int{opt.Height, opt.Width, 4})
	g, err := graph.New(m)
	require.NoError(t, err)
	tp, err := ops.NewTape(m, g)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tp.Close() })
	r.img, err = render.SoftRender(tp, r.tri, r.rgba, opt)
	require.NoError(t, err)
	g.Input(r.tri, r.rgba)
	bw, err := tp.Grad([]*tensor.Tensor{r.img}, []*tensor.Tensor{r.dy}, []*tensor.Tensor{r.tri, r.rgba})
	require.NoError(t, err)
	r.gtri, r.grgba, r.saved = bw.Grads[0], bw.Grads[1], bw.SavedBytes
	r.fwd, err = g.Compile(graph.Queues(0, 1))
	require.NoError(t, err)
	r.bwd, err = bw.Graph.Compile(graph.Queues(0, 1))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = r.fwd.Close()
		_ = r.bwd.Close()
	})
	return r
}

// forward runs the forward graph and reads the image.
func (r *rendered) forward(t *testing.T) []float64 {
	ctx := ctxT(t)
	require.NoError(t, r.fwd.Run(ctx))
	require.NoError(t, r.img.Wait(ctx))
	return opstest.LinRead(t, r.img)
}

// backward runs both graphs and reads the gradients.
func (r *rendered) backward(t *testing.T) (gtri, grgba []float64) {
	ctx := ctxT(t)
	require.NoError(t, r.fwd.Run(ctx))
	require.NoError(t, r.bwd.Run(ctx))
	require.NoError(t, r.gtri.Wait(ctx))
	require.NoError(t, r.grgba.Wait(ctx))
	return opstest.LinRead(t, r.gtri), opstest.LinRead(t, r.grgba)
}

func maxAbsDiff(a, b []float64) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
			return math.Inf(1)
		}
	}
	return d
}

func randomWeights(rng *rand.Rand, n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = rng.Float64()*2 - 1
	}
	return w
}

// The forward image equals the formula's, in float64 to 1e-9 and in
// float32 to 2e-5, for any batch (one triangle a layer, uneven, one layer,
// more than N) and sigma, on two queues.
func TestSoftRenderForward(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	rng := rand.New(rand.NewPCG(1, 2))
	const h, w, n = 13, 17, 11
	s := randomScene(rng, n, h, w)
	weights := randomWeights(rng, h*w*4)
	for _, sigma := range []float64{0.3, 1, 4} {
		want := reference(s, h, w, sigma)
		for _, tc := range []struct {
			dt  tensor.Dtype
			tol float64
		}{{tensor.Float64, 1e-9}, {tensor.Float32, 2e-5}} {
			for _, batch := range []int{1, 3, 8, n, 40} {
				t.Run(fmt.Sprintf("%v/sigma=%v/batch=%d", tc.dt, sigma, batch), func(t *testing.T) {
					opt := render.Options{Height: h, Width: w, Sigma: sigma, Batch: batch, RasterQueue: 0, BlendQueue: 1}
					r := build(t, m, tc.dt, s, opt, weights)
					got := r.forward(t)
					assert.LessOrEqual(t, maxAbsDiff(got, want), tc.tol)
				})
			}
		}
	}
}

// The gradients equal central differences of the formula (float64), for
// several batches; two backward runs give the same bits.
func TestSoftRenderGradient(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	rng := rand.New(rand.NewPCG(3, 4))
	const h, w, n = 9, 11, 5
	s := randomScene(rng, n, h, w)
	weights := randomWeights(rng, h*w*4)
	for _, sigma := range []float64{0.7, 2} {
		wantTri, wantRgba := numericGrad(s, h, w, sigma, weights)
		for _, batch := range []int{1, 2, n} {
			t.Run(fmt.Sprintf("sigma=%v/batch=%d", sigma, batch), func(t *testing.T) {
				opt := render.Options{Height: h, Width: w, Sigma: sigma, Batch: batch, RasterQueue: 0, BlendQueue: 1}
				r := build(t, m, tensor.Float64, s, opt, weights)
				gtri, grgba := r.backward(t)
				assert.LessOrEqual(t, maxAbsDiff(gtri, wantTri), 1e-6, "d/dtri")
				assert.LessOrEqual(t, maxAbsDiff(grgba, wantRgba), 1e-6, "d/drgba")
				gtri2, grgba2 := r.backward(t)
				assert.Equal(t, gtri, gtri2, "a second backward gives the same bits")
				assert.Equal(t, grgba, grgba2)
			})
		}
	}
}

// A mutation check of TestSoftRenderGradient's comparison: with a wrong
// VJP for soft_raster (its cotangent scaled) the gradients differ from the
// finite differences by far more than the tolerance.
func TestSoftRenderGradientMutation(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	rng := rand.New(rand.NewPCG(3, 4))
	const h, w, n = 7, 8, 3
	s := randomScene(rng, n, h, w)
	weights := randomWeights(rng, h*w*4)
	wantTri, _ := numericGrad(s, h, w, 1, weights)
	restore := render.SwapRasterVJP(func(b *ops.GradBuilder) []*tensor.Tensor {
		g := b.Mul(b.Cot(0), b.Cot(0))
		return b.CallN("soft_raster_vjp", b.Attrs(), 2, b.In(0), b.In(1), g)
	})
	defer restore()
	r := build(t, m, tensor.Float64, s, render.Options{Height: h, Width: w, Batch: 2, BlendQueue: 1}, weights)
	gtri, _ := r.backward(t)
	assert.Greater(t, maxAbsDiff(gtri, wantTri), 1e-3, "a wrong VJP must be caught")
}

// A vertex exactly on a pixel centre (d = 0 there, twice) gives finite
// images and gradients.
func TestSoftRenderVertexOnPixelCentre(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	s := scene{n: 2,
		tri:  []float64{2.5, 1.5, 6.5, 2.5, 3.5, 5.5, 1.5, 1.5, 1.5, 1.5, 4.5, 4.5}, // the second is degenerate
		rgba: []float64{0.2, 0.4, 0.6, 0.8, 0.9, 0.1, 0.3, 0.5}}
	const h, w = 8, 8
	weights := randomWeights(rand.New(rand.NewPCG(5, 6)), h*w*4)
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		r := build(t, m, dt, s, render.Options{Height: h, Width: w, BlendQueue: 1}, weights)
		img := r.forward(t)
		gtri, grgba := r.backward(t)
		for _, vs := range [][]float64{img, gtri, grgba} {
			for _, v := range vs {
				require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%v: %v", dt, vs)
			}
		}
		want := reference(s, h, w, 1)
		assert.LessOrEqual(t, maxAbsDiff(img, want), 2e-5)
	}
}

// Record's forward-only render with a ring of InFlight layers equals the
// differentiable render, for every ring size, and its schedule uses both
// queues.
func TestRecordRing(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	rng := rand.New(rand.NewPCG(7, 8))
	const h, w, n = 12, 10, 13
	s := randomScene(rng, n, h, w)
	want := reference(s, h, w, 1.5)
	tri := opstest.LinTensor(t, m, tensor.Float64, s.tri, []int{n, 3, 2})
	rgba := opstest.LinTensor(t, m, tensor.Float64, s.rgba, []int{n, 4})
	for _, k := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprint("inflight=", k), func(t *testing.T) {
			g, err := graph.New(m)
			require.NoError(t, err)
			r, err := render.Record(g, m, tri, rgba, render.Options{Height: h, Width: w, Sigma: 1.5, Batch: 3, InFlight: k, BlendQueue: 1})
			require.NoError(t, err)
			defer func() { require.NoError(t, r.Close()) }()
			g.Input(tri, rgba)
			ex, err := g.Compile(graph.Queues(0, 1))
			require.NoError(t, err)
			defer func() { require.NoError(t, ex.Close()) }()
			assert.Contains(t, ex.String(), ": queue 1")
			ctx := ctxT(t)
			for range 2 { // the second run starts from the cleared image too
				require.NoError(t, ex.Run(ctx))
				require.NoError(t, r.Image().Wait(ctx))
				assert.LessOrEqual(t, maxAbsDiff(opstest.LinRead(t, r.Image()), want), 1e-9)
			}
		})
	}
}

// Bad input is refused with ErrInvalid naming the problem, and nothing is
// recorded.
func TestSoftRenderRefuses(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	f64 := func(shape ...int) *tensor.Tensor {
		return opstest.LinTensor(t, m, tensor.Float64, make([]float64, opstest.NumelOf(shape)), shape)
	}
	ok := render.Options{Height: 4, Width: 4}
	for _, tc := range []struct {
		name      string
		tri, rgba *tensor.Tensor
		opt       render.Options
		want      string
	}{
		{"tri shape", f64(2, 3, 3), f64(2, 4), ok, "want [N, 3, 2]"},
		{"rgba shape", f64(2, 3, 2), f64(3, 4), ok, "want [2, 4]"},
		{"dtypes", f64(2, 3, 2), opstest.LinTensor(t, m, tensor.Float32, make([]float64, 8), []int{2, 4}), ok, "want one dtype"},
		{"int", opstest.LinTensor(t, m, tensor.Int32, make([]float64, 6), []int{1, 3, 2}), f64(1, 4), ok, "float32, float64"},
		{"sigma", f64(1, 3, 2), f64(1, 4), render.Options{Height: 4, Width: 4, Sigma: -1}, "sigma"},
		{"sigma NaN", f64(1, 3, 2), f64(1, 4), render.Options{Height: 4, Width: 4, Sigma: math.NaN()}, "sigma"},
		{"size", f64(1, 3, 2), f64(1, 4), render.Options{Height: 0, Width: 4}, "size"},
		{"batch", f64(1, 3, 2), f64(1, 4), render.Options{Height: 4, Width: 4, Batch: -2}, "Batch"},
		{"queue", f64(1, 3, 2), f64(1, 4), render.Options{Height: 4, Width: 4, BlendQueue: -3}, "queues"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := graph.New(m)
			require.NoError(t, err)
			tp, err := ops.NewTape(m, g)
			require.NoError(t, err)
			defer func() { _ = tp.Close() }()
			_, err = render.SoftRender(tp, tc.tri, tc.rgba, tc.opt)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
			assert.Zero(t, g.Len(), "a refused render records nothing")
			_, err = render.Record(g, m, tc.tri, tc.rgba, tc.opt)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Zero(t, g.Len())
		})
	}
}

// A mutation check of the bit-identity assertions: summing the backward's
// terms in another order (fewer invocations, so other partial sums)
// changes the gradients' bits while they agree to rounding, so an order
// that changed from run to run (as float atomics' does) would fail
// TestSoftRenderGradient's second-run comparison.
func TestSoftRenderSumOrderMutation(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	rng := rand.New(rand.NewPCG(9, 10))
	const h, w, n = 24, 20, 6
	s := randomScene(rng, n, h, w)
	weights := randomWeights(rng, h*w*4)
	opt := render.Options{Height: h, Width: w, Batch: 3, BlendQueue: 1}
	gtri, grgba := build(t, m, tensor.Float32, s, opt, weights).backward(t)
	restore := render.SetBackwardThreads(7)
	defer restore()
	gtri2, grgba2 := build(t, m, tensor.Float32, s, opt, weights).backward(t)
	assert.NotEqual(t, append(gtri, grgba...), append(gtri2, grgba2...), "another summation order changes bits")
	assert.LessOrEqual(t, maxAbsDiff(gtri, gtri2), 1e-3)
	assert.LessOrEqual(t, maxAbsDiff(grgba, grgba2), 1e-3)
}

// No triangles: a transparent image, from the tape and from Record.
func TestNoTriangles(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	tri := opstest.LinTensor(t, m, tensor.Float32, nil, []int{0, 3, 2})
	rgba := opstest.LinTensor(t, m, tensor.Float32, nil, []int{0, 4})
	opt := render.Options{Height: 3, Width: 5, BlendQueue: 1}
	g, err := graph.New(m)
	require.NoError(t, err)
	tp, err := ops.NewTape(m, g)
	require.NoError(t, err)
	defer func() { _ = tp.Close() }()
	img, err := render.SoftRender(tp, tri, rgba, opt)
	require.NoError(t, err)
	r, err := render.Record(g, m, tri, rgba, opt)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	ex, err := g.Compile(graph.Queues(0, 1))
	require.NoError(t, err)
	defer func() { require.NoError(t, ex.Close()) }()
	ctx := ctxT(t)
	require.NoError(t, ex.Run(ctx))
	for _, x := range []*tensor.Tensor{img, r.Image()} {
		require.NoError(t, x.Wait(ctx))
		assert.Equal(t, make([]float64, 3*5*4), opstest.LinRead(t, x))
	}
	// A new tensor reads zero anyway: into a layer that holds ones, the
	// empty layer must write its zeros.
	ones := make([]float64, 3*5*4)
	for i := range ones {
		ones[i] = 1
	}
	layer := opstest.LinTensor(t, m, tensor.Float32, ones, []int{3, 5, 4})
	outs, err := ops.Call(ctx, m, "soft_raster", []*tensor.Tensor{tri, rgba}, []*tensor.Tensor{layer}, ops.Attrs{Shape: []int{3, 5}})
	require.NoError(t, err)
	require.Equal(t, layer, outs[0])
	assert.Equal(t, make([]float64, 3*5*4), opstest.LinRead(t, layer))
}

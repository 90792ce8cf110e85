package linalg_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/linalg"
	"github.com/vkflow/vkflow/tensor"
)

func TestLinalgMatrixPower(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(9, 10))
	n := 4
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64, tensor.Int32} {
		a := linRandom(rng, dt, 2*n*n)
		if dt == tensor.Int32 {
			for i := range a {
				a[i] = float64(rng.IntN(5) - 2)
			}
		}
		at := linTensor(t, m, dt, a, []int{2, n, n})
		for _, p := range []int{0, 1, 2, 5, 8, -1, -3} {
			if p < 0 && dt == tensor.Int32 {
				continue
			}
			got := linCall(t, m, "matrix_power", []*tensor.Tensor{at}, ops.Attrs{N: p})[0]
			for b := range 2 {
				ai := a[b*n*n : (b+1)*n*n]
				base := ai
				if p < 0 {
					eye := make([]float64, n*n)
					for i := range n {
						eye[i*n+i] = 1
					}
					base, _ = refSolve(ai, eye, n, n)
				}
				w := make([]float64, n*n)
				for i := range n {
					w[i*n+i] = 1
				}
				for range max(p, -p) {
					w = linMatmul(w, base, n, n, n)
				}
				requireClose(t, w, got[b*n*n:(b+1)*n*n], 1e3*linEps(dt)+1e-300, "matrix_power")
			}
		}
	}
}

func TestLinalgTensordotVecdot(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(11, 12))
	dt := tensor.Float64
	// a [2, 3, 4], b [4, 3, 5]: contract a's (1, 2) with b's (1, 0).
	a, b := linRandom(rng, dt, 24), linRandom(rng, dt, 60)
	at, bt := linTensor(t, m, dt, a, []int{2, 3, 4}), linTensor(t, m, dt, b, []int{4, 3, 5})
	got := linCall(t, m, "tensordot", []*tensor.Tensor{at, bt}, ops.Attrs{Axes: []int{1, -1}, Axes2: []int{1, 0}})[0]
	want := make([]float64, 10)
	for i := range 2 {
		for l := range 5 {
			for j := range 3 {
				for k := range 4 {
					want[i*5+l] += a[i*12+j*4+k] * b[k*15+j*5+l]
				}
			}
		}
	}
	requireClose(t, want, got, 1e-12, "tensordot")
	// No axes: the outer product, [2, 3, 4, 4, 3, 5].
	outs, err := ops.Call(t.Context(), m, "tensordot", []*tensor.Tensor{at, bt}, nil, ops.Attrs{})
	require.NoError(t, err)
	require.Equal(t, []int{2, 3, 4, 4, 3, 5}, outs[0].Shape())
	o := linRead(t, outs[0])
	require.InDelta(t, a[23]*b[7], o[23*60+7], 1e-15)
	// vecdot of [2, 1, 3] and [4, 3] along -1: [2, 4]; along axis 0 of [3, 2] and [3, 1].
	x, y := linRandom(rng, dt, 6), linRandom(rng, dt, 12)
	xt, yt := linTensor(t, m, dt, x, []int{2, 1, 3}), linTensor(t, m, dt, y, []int{4, 3})
	got = linCall(t, m, "vecdot", []*tensor.Tensor{xt, yt}, ops.Attrs{})[0]
	want = make([]float64, 8)
	for i := range 2 {
		for j := range 4 {
			for k := range 3 {
				want[i*4+j] += x[i*3+k] * y[j*3+k]
			}
		}
	}
	requireClose(t, want, got, 1e-12, "vecdot")
	x2, y2 := linTensor(t, m, dt, x, []int{3, 2}), linTensor(t, m, dt, y[:3], []int{3, 1})
	got = linCall(t, m, "vecdot", []*tensor.Tensor{x2, y2}, ops.Attrs{Axes: []int{0}})[0]
	requireClose(t, []float64{x[0]*y[0] + x[2]*y[1] + x[4]*y[2], x[1]*y[0] + x[3]*y[1] + x[5]*y[2]}, got, 1e-12, "vecdot axis 0")
}

func TestLinalgVecdotChunks(t *testing.T) {
	m, _ := testutil.Manager(t)
	t.Cleanup(linalg.SetVecdotChunk(5))
	a := make([]float64, 23)
	b := make([]float64, 23)
	want := 0.0
	for i := range a {
		a[i], b[i] = float64(i), float64(i%4)
		want += a[i] * b[i]
	}
	at, bt := linTensor(t, m, tensor.Int32, a, []int{23}), linTensor(t, m, tensor.Int32, b, []int{23})
	require.Equal(t, []float64{want}, linCall(t, m, "vecdot", []*tensor.Tensor{at, bt}, ops.Attrs{})[0])
}

func TestLinalgOuterCrossDiagTrace(t *testing.T) {
	m, _ := testutil.Manager(t)
	at := linTensor(t, m, tensor.Int16, []float64{1, 2, 3}, []int{3})
	bt := linTensor(t, m, tensor.Int16, []float64{4, 5}, []int{2})
	require.Equal(t, []float64{4, 5, 8, 10, 12, 15}, linCall(t, m, "outer", []*tensor.Tensor{at, bt}, ops.Attrs{})[0])
	// cross along axis 0 of [3, 2] with [3, 1] (broadcast).
	x := linTensor(t, m, tensor.Float32, []float64{1, 0, 0, 1, 0, 0}, []int{3, 2})
	y := linTensor(t, m, tensor.Float32, []float64{0, 1, 0}, []int{3, 1})
	// columns x0 = (1,0,0), x1 = (0,1,0); y = (0,1,0): x0×y = (0,0,1), x1×y = 0.
	require.Equal(t, []float64{0, 0, 0, 0, 1, 0}, linCall(t, m, "cross", []*tensor.Tensor{x, y}, ops.Attrs{Axes: []int{0}})[0])
	u := linTensor(t, m, tensor.Float64, []float64{1, 2, 3, -1, 0, 2}, []int{2, 3})
	v := linTensor(t, m, tensor.Float64, []float64{4, 5, 6}, []int{3})
	require.Equal(t, []float64{2*6 - 3*5, 3*4 - 1*6, 1*5 - 2*4, 0*6 - 2*5, 2*4 - (-1)*6, -1*5 - 0*4},
		linCall(t, m, "cross", []*tensor.Tensor{u, v}, ops.Attrs{})[0])
	// diagonal and trace of [2, 3, 4] with offsets.
	vals := make([]float64, 24)
	for i := range vals {
		vals[i] = float64(i)
	}
	d := linTensor(t, m, tensor.Int32, vals, []int{2, 3, 4})
	for _, c := range []struct {
		off  int
		diag []float64
	}{
		{0, []float64{0, 5, 10, 12, 17, 22}},
		{1, []float64{1, 6, 11, 13, 18, 23}},
		{-1, []float64{4, 9, 16, 21}},
		{3, []float64{3, 15}},
		{4, nil}, {-3, nil},
	} {
		got := linCall(t, m, "diagonal", []*tensor.Tensor{d}, ops.Attrs{Offset: c.off})[0]
		require.Equal(t, len(c.diag), len(got), "offset %d", c.off)
		if len(c.diag) > 0 {
			require.Equal(t, c.diag, got, "offset %d", c.off)
		}
		tr := make([]float64, 2)
		for i, v := range c.diag {
			tr[i/(len(c.diag)/2)] += v
		}
		outs, err := ops.Call(t.Context(), m, "trace", []*tensor.Tensor{d}, nil, ops.Attrs{Offset: c.off})
		require.NoError(t, err)
		require.Equal(t, tensor.Int64, outs[0].Dtype())
		require.Equal(t, tr, linRead(t, outs[0]), "trace offset %d", c.off)
	}
}

// The eager stream's op cache tells calls apart by the linalg attributes
// (Upper, Mode, N, Offset, Axes2): a call must not reuse the op prepared
// for another value of them.
func TestLinalgStreamAttrs(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	vals := []float64{4, 2, 2, 5}
	x := linTensor(t, m, tensor.Float64, vals, []int{2, 2})
	run := func(name string, at ops.Attrs) []float64 {
		outs, err := s.Call(name, []*tensor.Tensor{x}, nil, at)
		require.NoError(t, err)
		require.NoError(t, outs[0].Wait(t.Context()))
		v := linRead(t, outs[0])
		for _, o := range outs {
			require.NoError(t, o.Close())
		}
		return v
	}
	require.Equal(t, []float64{4, 5}, run("diagonal", ops.Attrs{}))
	require.Equal(t, []float64{2}, run("diagonal", ops.Attrs{Offset: 1}))
	require.Equal(t, []float64{2, 0, 1, 2}, run("cholesky", ops.Attrs{}))
	require.Equal(t, []float64{2, 1, 0, 2}, run("cholesky", ops.Attrs{Upper: true}))
	require.Equal(t, []float64{20, 18, 18, 29}, run("matrix_power", ops.Attrs{N: 2}))
	require.Equal(t, []float64{4, 2, 2, 5}, run("matrix_power", ops.Attrs{N: 1}))
}

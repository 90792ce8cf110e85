package linalg_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// CPU references and helpers of the linalg tests (float64 throughout).

// linCall runs op name and returns its outputs read back.
func linCall(t *testing.T, m *vkflow.Manager, name string, in []*tensor.Tensor, at ops.Attrs) [][]float64 {
	t.Helper()
	outs, err := ops.Call(context.Background(), m, name, in, nil, at)
	require.NoError(t, err)
	res := make([][]float64, len(outs))
	for i, o := range outs {
		res[i] = linRead(t, o)
		require.NoError(t, o.Close())
	}
	return res
}

// refSolve solves a·x = b (n×n, n×k) by Gaussian elimination with partial
// pivoting; also returns det(a).
func refSolve(a, b []float64, n, k int) ([]float64, float64) {
	a = append([]float64(nil), a...)
	x := append([]float64(nil), b...)
	det := 1.0
	for c := range n {
		p := c
		for i := c + 1; i < n; i++ {
			if math.Abs(a[i*n+c]) > math.Abs(a[p*n+c]) {
				p = i
			}
		}
		if p != c {
			det = -det
			for j := range n {
				a[c*n+j], a[p*n+j] = a[p*n+j], a[c*n+j]
			}
			for j := range k {
				x[c*k+j], x[p*k+j] = x[p*k+j], x[c*k+j]
			}
		}
		d := a[c*n+c]
		det *= d
		if d == 0 {
			continue
		}
		for i := c + 1; i < n; i++ {
			l := a[i*n+c] / d
			for j := c; j < n; j++ {
				a[i*n+j] -= l * a[c*n+j]
			}
			for j := range k {
				x[i*k+j] -= l * x[c*k+j]
			}
		}
	}
	for c := n - 1; c >= 0; c-- {
		for j := range k {
			s := x[c*k+j]
			for i := c + 1; i < n; i++ {
				s -= a[c*n+i] * x[i*k+j]
			}
			x[c*k+j] = s / a[c*n+c]
		}
	}
	return x, det
}

// linMatmul is a (m×k) · b (k×n).
func linMatmul(a, b []float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := 0.0
			for l := range k {
				s += a[i*k+l] * b[l*n+j]
			}
			c[i*n+j] = s
		}
	}
	return c
}

// refT is a (m×n) transposed.
func refT(a []float64, m, n int) []float64 {
	t := make([]float64, m*n)
	for i := range m {
		for j := range n {
			t[j*m+i] = a[i*n+j]
		}
	}
	return t
}

// linEps is the unit roundoff of dt.
func linEps(dt tensor.Dtype) float64 {
	if dt == tensor.Float32 {
		return 0x1p-24
	}
	return 0x1p-53
}

// maxAbs is the largest magnitude in v (1 at least).
func maxAbs(v []float64) float64 {
	m := 1.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// requireClose checks |got - want| <= tol * scale elementwise.
func requireClose(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	scale := maxAbs(want)
	for i := range want {
		if math.IsNaN(want[i]) {
			require.True(t, math.IsNaN(got[i]), "%s[%d]: got %v, want NaN", what, i, got[i])
			continue
		}
		require.InDelta(t, want[i], got[i], tol*scale, "%s[%d]", what, i)
	}
}

// spd returns a random symmetric positive-definite n×n matrix: b·bᵀ + n·I.
func spd(rng *rand.Rand, dt tensor.Dtype, n int) []float64 {
	b := linRandom(rng, tensor.Float64, n*n)
	a := linMatmul(b, refT(b, n, n), n, n, n)
	for i := range n {
		a[i*n+i] += float64(n)
	}
	for i := range a { // exact in dt, symmetric
		a[i] = float64(float32(a[i]))
	}
	return a
}

// refCholesky is the lower Cholesky factor of a (n×n).
func refCholesky(a []float64, n int) []float64 {
	l := make([]float64, n*n)
	for j := range n {
		s := a[j*n+j]
		for k := range j {
			s -= l[j*n+k] * l[j*n+k]
		}
		l[j*n+j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := range j {
				s -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = s / l[j*n+j]
		}
	}
	return l
}

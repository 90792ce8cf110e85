package linalg_test

import (
	"context"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// CPU references (complex128) and helpers of the complex linalg tests.

// cxCall runs op name over in and returns its outputs read back as
// complex128 values, with their dtypes.
func cxCall(t *testing.T, m ops.Owner, name string, in []*tensor.Tensor, at ops.Attrs) ([][]complex128, []tensor.Dtype) {
	t.Helper()
	outs, err := ops.Call(context.Background(), m, name, in, nil, at)
	require.NoError(t, err, name)
	res := make([][]complex128, len(outs))
	dts := make([]tensor.Dtype, len(outs))
	for i, o := range outs {
		res[i], dts[i] = readBack(t, o), o.Dtype()
		require.NoError(t, o.Close())
	}
	return res, dts
}

// cxRandMatrix is an m×n matrix of complex entries with parts in [-1, 1),
// rounded to dt.
func cxRandMatrix(rng *rand.Rand, dt tensor.Dtype, m, n int) []complex128 {
	a := make([]complex128, m*n)
	for i := range a {
		a[i] = cxRound(dt, complex(2*rng.Float64()-1, 2*rng.Float64()-1))
	}
	return a
}

// cxWellConditioned is an n×n matrix with a dominant diagonal.
func cxWellConditioned(rng *rand.Rand, dt tensor.Dtype, n int) []complex128 {
	a := cxRandMatrix(rng, dt, n, n)
	for i := 0; i < n; i++ {
		a[i*n+i] = cxRound(dt, a[i*n+i]+complex(float64(n), float64(n)/2))
	}
	return a
}

// cxHPD is a Hermitian positive-definite n×n matrix (B·Bᴴ + n·I).
func cxHPD(rng *rand.Rand, dt tensor.Dtype, n int) []complex128 {
	b := cxRandMatrix(rng, dt, n, n)
	a := cxMatmul(b, cxAdjoint(b, n, n), n, n, n)
	for i := 0; i < n; i++ {
		a[i*n+i] += complex(float64(n), 0)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			a[i*n+j] = cxRound(dt, a[i*n+j])
			a[j*n+i] = cmplx.Conj(a[i*n+j])
		}
		a[i*n+i] = complex(real(cxRound(dt, a[i*n+i])), 0)
	}
	return a
}

// cxMatmul is a·b (m×k times k×n).
func cxMatmul(a, b []complex128, m, k, n int) []complex128 {
	c := make([]complex128, m*n)
	for i := 0; i < m; i++ {
		for l := 0; l < k; l++ {
			for j := 0; j < n; j++ {
				c[i*n+j] += a[i*k+l] * b[l*n+j]
			}
		}
	}
	return c
}

// cxAdjoint is the conjugate transpose of the m×n matrix a.
func cxAdjoint(a []complex128, m, n int) []complex128 {
	b := make([]complex128, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			b[j*m+i] = cmplx.Conj(a[i*n+j])
		}
	}
	return b
}

// cxRefSolve solves a·x = b (n×n, n×k) by Gaussian elimination with
// partial pivoting (on |·|); also returns det(a).
func cxRefSolve(a, b []complex128, n, k int) ([]complex128, complex128) {
	a = append([]complex128(nil), a...)
	x := append([]complex128(nil), b...)
	det := complex(1, 0)
	for c := 0; c < n; c++ {
		p := c
		for i := c + 1; i < n; i++ {
			if cmplx.Abs(a[i*n+c]) > cmplx.Abs(a[p*n+c]) {
				p = i
			}
		}
		if p != c {
			det = -det
			for j := 0; j < n; j++ {
				a[c*n+j], a[p*n+j] = a[p*n+j], a[c*n+j]
			}
			for j := 0; j < k; j++ {
				x[c*k+j], x[p*k+j] = x[p*k+j], x[c*k+j]
			}
		}
		det *= a[c*n+c]
		for i := c + 1; i < n; i++ {
			f := a[i*n+c] / a[c*n+c]
			for j := c; j < n; j++ {
				a[i*n+j] -= f * a[c*n+j]
			}
			for j := 0; j < k; j++ {
				x[i*k+j] -= f * x[c*k+j]
			}
		}
	}
	for c := n - 1; c >= 0; c-- {
		for j := 0; j < k; j++ {
			s := x[c*k+j]
			for l := c + 1; l < n; l++ {
				s -= a[c*n+l] * x[l*k+j]
			}
			x[c*k+j] = s / a[c*n+c]
		}
	}
	return x, det
}

// cxMaxAbs is the largest |v|.
func cxMaxAbs(v []complex128) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, cmplx.Abs(x))
	}
	return m
}

// cxRequireClose requires |want - got| ≤ tol·max(1, max|want|)
// element-wise.
func cxRequireClose(t *testing.T, want, got []complex128, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	scale := math.Max(1, cxMaxAbs(want))
	for i := range want {
		if d := cmplx.Abs(want[i] - got[i]); !(d <= tol*scale) {
			t.Fatalf("%s: element %d is %v, want %v (|diff| %.3g > %.3g)", what, i, got[i], want[i], d, tol*scale)
		}
	}
}

// cxEye is the n×n identity.
func cxEye(n int) []complex128 {
	e := make([]complex128, n*n)
	for i := 0; i < n; i++ {
		e[i*n+i] = 1
	}
	return e
}

package linalg_test

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
)

// CPU references of the complex spectral linalg tests, in complex128:
// row-major matrices.

// csRandom returns n random complex values with parts in [-1, 1).
func csRandom(rng *rand.Rand, n int) []complex128 {
	v := make([]complex128, n)
	for i := range v {
		v[i] = complex(rng.Float64()*2-1, rng.Float64()*2-1)
	}
	return v
}

// csHermitian makes a random Hermitian n×n matrix (real diagonal).
func csHermitian(rng *rand.Rand, n int) []complex128 {
	a := csRandom(rng, n*n)
	for i := range n {
		a[i*n+i] = complex(real(a[i*n+i]), 0)
		for j := range i {
			a[j*n+i] = cmplx.Conj(a[i*n+j])
		}
	}
	return a
}

// csMul is the product of a (m×k) and b (k×n).
func csMul(a, b []complex128, m, k, n int) []complex128 {
	c := make([]complex128, m*n)
	for i := range m {
		for l := range k {
			x := a[i*k+l]
			for j := range n {
				c[i*n+j] += x * b[l*n+j]
			}
		}
	}
	return c
}

// csH is the conjugate transpose of a (m×n).
func csH(a []complex128, m, n int) []complex128 {
	t := make([]complex128, m*n)
	for i := range m {
		for j := range n {
			t[j*m+i] = cmplx.Conj(a[i*n+j])
		}
	}
	return t
}

// csMaxDiff is the largest |a - b|.
func csMaxDiff(a, b []complex128) float64 {
	d := 0.0
	for i := range a {
		d = max(d, cmplx.Abs(a[i]-b[i]))
	}
	return d
}

// csUnitaryErr is max |QᴴQ - I| over Q's n columns (m×n; rows: Q Qᴴ over
// its m rows).
func csUnitaryErr(q []complex128, m, n int, rows bool) float64 {
	var g []complex128
	k := n
	if rows {
		g, k = csMul(q, csH(q, m, n), m, n, m), m
	} else {
		g = csMul(csH(q, m, n), q, n, m, n)
	}
	e := 0.0
	for i := range k {
		for j := range k {
			want := 0.0
			if i == j {
				want = 1
			}
			e = max(e, cmplx.Abs(g[i*k+j]-complex(want, 0)))
		}
	}
	return e
}

// csSingular returns the singular values of a (m×n), descending: complex
// one-sided Jacobi (rotations x' = c x - s ē y, y' = s e x + c y, e the
// phase of xᴴy) on the columns of a, or of aᴴ when it is wide, until
// every pair is orthogonal to 1e-15.
func csSingular(a []complex128, m, n int) []float64 {
	if n > m {
		a, m, n = csH(a, m, n), n, m
	}
	col := make([][]complex128, n)
	for j := range n {
		col[j] = make([]complex128, m)
		for i := range m {
			col[j][i] = a[i*n+j]
		}
	}
	for range 60 {
		done := true
		for p := range n {
			for q := p + 1; q < n; q++ {
				var al, be float64
				var g complex128
				for i := range m {
					x, y := col[p][i], col[q][i]
					al += real(x)*real(x) + imag(x)*imag(x)
					be += real(y)*real(y) + imag(y)*imag(y)
					g += cmplx.Conj(x) * y
				}
				ag := cmplx.Abs(g)
				if ag <= 1e-15*math.Sqrt(al*be) || ag == 0 {
					continue
				}
				done = false
				ze := (be - al) / (2 * ag)
				t := math.Copysign(1, ze) / (math.Abs(ze) + math.Sqrt(1+ze*ze))
				c := 1 / math.Sqrt(1+t*t)
				s := c * t
				e := g / complex(ag, 0)
				for i := range m {
					x, y := col[p][i], col[q][i]
					col[p][i] = complex(c, 0)*x - complex(s, 0)*cmplx.Conj(e)*y
					col[q][i] = complex(s, 0)*e*x + complex(c, 0)*y
				}
			}
		}
		if done {
			break
		}
	}
	sv := make([]float64, n)
	for j := range n {
		for _, v := range col[j] {
			sv[j] += real(v)*real(v) + imag(v)*imag(v)
		}
		sv[j] = math.Sqrt(sv[j])
	}
	slices.Sort(sv)
	slices.Reverse(sv)
	return sv
}

// csEigvals returns the eigenvalues of Hermitian a (n×n), ascending: the
// singular values of a + σI (σ = the largest absolute row sum, so a + σI
// is positive semidefinite) less σ.
func csEigvals(a []complex128, n int) []float64 {
	sig := 0.0
	for i := range n {
		r := 0.0
		for j := range n {
			r += cmplx.Abs(a[i*n+j])
		}
		sig = max(sig, r)
	}
	b := slices.Clone(a)
	for i := range n {
		b[i*n+i] += complex(sig, 0)
	}
	sv := csSingular(b, n, n)
	for i := range sv {
		sv[i] -= sig
	}
	slices.Sort(sv)
	return sv
}

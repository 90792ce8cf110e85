package linalg_test

import (
	"math"
	"sort"
)

// CPU references of the spectral linalg tests: a serial cyclic Jacobi
// eigensolver for symmetric matrices in float64, and what follows from it.

// refEigSym returns the eigenvalues of the symmetric n×n matrix a
// (row-major), ascending, by cyclic two-sided Jacobi in float64.
func refEigSym(a []float64, n int) []float64 {
	m := append([]float64(nil), a...)
	at := func(i, j int) *float64 { return &m[i*n+j] }
	for range 100 {
		off := 0.0
		for i := range n {
			for j := range n {
				if i != j {
					off += *at(i, j) * *at(i, j)
				}
			}
		}
		if off == 0 || math.Sqrt(off) < 1e-300 {
			break
		}
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				apq := *at(p, q)
				if apq == 0 {
					continue
				}
				theta := (*at(q, q) - *at(p, p)) / (2 * apq)
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					akp, akq := *at(k, p), *at(k, q)
					*at(k, p), *at(k, q) = c*akp-s*akq, s*akp+c*akq
				}
				for k := range n {
					apk, aqk := *at(p, k), *at(q, k)
					*at(p, k), *at(q, k) = c*apk-s*aqk, s*apk+c*aqk
				}
			}
		}
	}
	w := make([]float64, n)
	for i := range n {
		w[i] = *at(i, i)
	}
	sort.Float64s(w)
	return w
}

// refSingular returns the singular values of the m×n row-major matrix a,
// descending, by serial one-sided Jacobi in float64 (cyclic order, on
// the columns of a or of aᵀ, whichever is taller).
func refSingular(a []float64, m, n int) []float64 {
	if m < n {
		a, m, n = transposeRef(a, m, n), n, m
	}
	w := append([]float64(nil), a...)
	for range 60 {
		done := true
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				al, be, ga := 0.0, 0.0, 0.0
				for i := range m {
					x, y := w[i*n+p], w[i*n+q]
					al, be, ga = al+x*x, be+y*y, ga+x*y
				}
				if ga == 0 || math.Abs(ga) <= 1e-16*math.Sqrt(al*be) {
					continue
				}
				done = false
				ze := (be - al) / (2 * ga)
				t := 1 / (math.Abs(ze) + math.Sqrt(1+ze*ze))
				if ze < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(1+t*t)
				s := c * t
				for i := range m {
					x, y := w[i*n+p], w[i*n+q]
					w[i*n+p], w[i*n+q] = c*x-s*y, s*x+c*y
				}
			}
		}
		if done {
			break
		}
	}
	out := make([]float64, n)
	for j := range n {
		s := 0.0
		for i := range m {
			s += w[i*n+j] * w[i*n+j]
		}
		out[j] = math.Sqrt(s)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(out)))
	return out
}

// matAt returns matrix b (r×c) of a stack stored row-major.
func matAt(x []float64, b, r, c int) []float64 { return x[b*r*c : (b+1)*r*c] }

// mulRef returns a (m×k) times b (k×n).
func mulRef(a, b []float64, m, k, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := 0.0
			for l := range k {
				s += a[i*k+l] * b[l*n+j]
			}
			out[i*n+j] = s
		}
	}
	return out
}

// orthoErr returns max |QᵀQ - I| over the columns of q (m×n), or over its
// rows when rows is set.
func orthoErr(q []float64, m, n int, rows bool) float64 {
	worst := 0.0
	if rows {
		q, m, n = transposeRef(q, m, n), n, m
	}
	for i := range n {
		for j := range n {
			s := 0.0
			for r := range m {
				s += q[r*n+i] * q[r*n+j]
			}
			if i == j {
				s--
			}
			worst = math.Max(worst, math.Abs(s))
		}
	}
	return worst
}

func transposeRef(a []float64, m, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			out[j*m+i] = a[i*n+j]
		}
	}
	return out
}

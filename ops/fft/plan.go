package fft

import (
	"math"
	"math/bits"
	"sync"
)

// The host side of the FFT ops: how a length is split into radix passes,
// and the tables the kernels read (roots of unity, Bluestein's chirp and
// the transform of its filter), computed in float64 and cached by length.

// fftRadices are the radices of the Stockham passes, tried in this order
// (largest first: fewer passes). A length whose factors are all among them
// is transformed directly; any other length goes through Bluestein.
var fftRadices = []int{16, 8, 4, 2, 7, 5, 3}

// fftFactors splits n into radices from fftRadices, or returns nil when n
// has a prime factor above 7. n = 1 has no passes (an empty, non-nil list).
func fftFactors(n int) []int {
	f := []int{}
	for _, r := range fftRadices {
		for n%r == 0 {
			f = append(f, r)
			n /= r
		}
	}
	if n != 1 {
		return nil
	}
	return f
}

// bluesteinLength is the power-of-two length of Bluestein's convolution
// for a transform of length n: at least 2n-1.
func bluesteinLength(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(2*n-2))
}

// sincosPi returns cos and sin of pi*p/q, for q > 0 and 0 <= p < 2q,
// accurately: the angle is reduced with integer arithmetic to [0, pi/4]
// before math.Sincos, so no rounding of a large angle enters.
func sincosPi(p, q uint64) (c, s float64) {
	negS, negC, swap := false, false, false
	// Work with the angle pi*p/(2q) in quarter units: scale p and q.
	p, q = 2*p, 2*q // angle = pi*p/q still; now q is even
	if p > q {      // (pi, 2pi): reflect, sin changes sign
		p, negS = 2*q-p, true
	}
	if 2*p > q { // (pi/2, pi]: pi - angle, cos changes sign
		p, negC = q-p, true
	}
	if 4*p > q { // (pi/4, pi/2]: pi/2 - angle, sin and cos swap
		p, swap = q/2-p, true
	}
	s, c = math.Sincos(math.Pi * float64(p) / float64(q))
	if swap {
		c, s = s, c
	}
	if negC {
		c = -c
	}
	if negS {
		s = -s
	}
	return c, s
}

// rootTable returns exp(-2 pi i t/n) for t in [0, n), interleaved (real,
// imaginary).
func rootTable(n int) []float64 {
	w := make([]float64, 2*n)
	for t := 0; t < n; t++ {
		c, s := sincosPi(uint64(2*t), uint64(n))
		w[2*t], w[2*t+1] = c, -s
	}
	return w
}

// hostFFT transforms x (interleaved complex, length a power of two) in
// place, forward (exp(-2 pi i jk/n)), in float64: iterative radix 2 with
// twiddles from rootTable.
func hostFFT(x []float64) {
	n := len(x) / 2
	if n <= 1 {
		return
	}
	lg := bits.Len(uint(n)) - 1
	for i := 0; i < n; i++ {
		j := int(bits.Reverse(uint(i)) >> (bits.UintSize - lg))
		if j > i {
			x[2*i], x[2*j] = x[2*j], x[2*i]
			x[2*i+1], x[2*j+1] = x[2*j+1], x[2*i+1]
		}
	}
	w := rootTable(n)
	for size := 2; size <= n; size *= 2 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := 0; k < half; k++ {
				wr, wi := w[2*k*step], w[2*k*step+1]
				a, b := start+k, start+k+half
				br, bi := x[2*b]*wr-x[2*b+1]*wi, x[2*b]*wi+x[2*b+1]*wr
				x[2*b], x[2*b+1] = x[2*a]-br, x[2*a+1]-bi
				x[2*a], x[2*a+1] = x[2*a]+br, x[2*a+1]+bi
			}
		}
	}
}

// bluesteinTables returns, for a transform of length n in direction sign
// (-1 forward, +1 inverse), the chirp w[k] = exp(sign i pi k^2/n), k < n,
// and the forward transform of length m of the filter conj(w) wrapped
// around (h[j] = conj(w[j]) and h[m-j] = conj(w[j]) for 0 < j < n), divided
// by m (the scale of the inverse transform that follows it).
func bluesteinTables(n, m int, inverse bool) (chirp, filter []float64) {
	sign := -1.0
	if inverse {
		sign = 1
	}
	chirp = make([]float64, 2*n)
	for k := 0; k < n; k++ {
		kk := uint64(k) * uint64(k) % uint64(2*n)
		c, s := sincosPi(kk, uint64(n))
		chirp[2*k], chirp[2*k+1] = c, sign*s
	}
	filter = make([]float64, 2*m)
	for j := 0; j < n; j++ {
		re, im := chirp[2*j], -chirp[2*j+1]
		filter[2*j], filter[2*j+1] = re, im
		if j > 0 {
			filter[2*(m-j)], filter[2*(m-j)+1] = re, im
		}
	}
	hostFFT(filter)
	inv := 1 / float64(m)
	for i := range filter {
		filter[i] *= inv
	}
	return chirp, filter
}

// fftTableKey names a cached host table.
type fftTableKey struct {
	kind    byte // 'w' roots, 'c' chirp, 'f' Bluestein filter
	n, m    int
	inverse bool
}

// fftTables caches host tables, bounded in bytes: past the bound it is
// emptied (tables are cheap to recompute next to a transform's upload).
var fftTables = struct {
	sync.Mutex
	m     map[fftTableKey][]float64
	bytes int
}{m: map[fftTableKey][]float64{}}

const fftTableCacheBytes = 64 << 20

// fftTable returns the cached table for key, computing it with compute.
func fftTable(key fftTableKey, compute func() []float64) []float64 {
	fftTables.Lock()
	t, ok := fftTables.m[key]
	fftTables.Unlock()
	if ok {
		return t
	}
	t = compute()
	fftTables.Lock()
	defer fftTables.Unlock()
	if fftTables.bytes+8*len(t) > fftTableCacheBytes {
		fftTables.m = map[fftTableKey][]float64{}
		fftTables.bytes = 0
	}
	if 8*len(t) <= fftTableCacheBytes {
		fftTables.m[key] = t
		fftTables.bytes += 8 * len(t)
	}
	return t
}

// hostRoots is rootTable(n), cached.
func hostRoots(n int) []float64 {
	return fftTable(fftTableKey{kind: 'w', n: n}, func() []float64 { return rootTable(n) })
}

// hostBluestein is bluesteinTables(n, m, inverse), cached.
func hostBluestein(n, m int, inverse bool) (chirp, filter []float64) {
	var f []float64
	c := fftTable(fftTableKey{kind: 'c', n: n, m: m, inverse: inverse}, func() []float64 {
		var cc []float64
		cc, f = bluesteinTables(n, m, inverse)
		return cc
	})
	filter = fftTable(fftTableKey{kind: 'f', n: n, m: m, inverse: inverse}, func() []float64 {
		if f == nil {
			_, f = bluesteinTables(n, m, inverse)
		}
		return f
	})
	return c, filter
}

package render_test

import (
	"math"
	"math/rand/v2"
)

// The formula on the CPU, in float64, written straight from
// docs/RENDERING.md: the reference the GPU is checked against, and (by
// central differences) its gradients.

// scene is N triangles: tri [N][3][2] flattened, rgba [N][4] flattened.
type scene struct {
	n         int
	tri, rgba []float64
}

// randomScene places n triangles of a few pixels to half the image over
// an h x w image, with colours and opacities in (0.1, 0.9).
func randomScene(rng *rand.Rand, n, h, w int) scene {
	s := scene{n: n, tri: make([]float64, n*6), rgba: make([]float64, n*4)}
	for t := range n {
		cx, cy := rng.Float64()*float64(w), rng.Float64()*float64(h)
		r := 2 + rng.Float64()*float64(min(h, w))/3
		for v := range 3 {
			s.tri[t*6+2*v] = cx + (rng.Float64()*2-1)*r
			s.tri[t*6+2*v+1] = cy + (rng.Float64()*2-1)*r
		}
		for c := range 4 {
			s.rgba[t*4+c] = 0.1 + 0.8*rng.Float64()
		}
	}
	return s
}

// signedDist is d of the formula for pixel centre (px, py) and triangle t.
func signedDist(tri []float64, t int, px, py float64) float64 {
	v := func(k int) (float64, float64) { k %= 3; return tri[t*6+2*k], tri[t*6+2*k+1] }
	best := math.Inf(1)
	var w [3]float64
	for k := range 3 {
		ax, ay := v(k)
		bx, by := v(k + 1)
		ex, ey := bx-ax, by-ay
		l2 := ex*ex + ey*ey
		s := 0.0
		if l2 > 0 {
			s = min(max(((px-ax)*ex+(py-ay)*ey)/l2, 0), 1)
		}
		qx, qy := px-(ax+s*ex), py-(ay+s*ey)
		best = min(best, math.Hypot(qx, qy))
		w[k] = ex*(py-ay) - ey*(px-ax)
	}
	inside := (w[0] >= 0 && w[1] >= 0 && w[2] >= 0) || (w[0] <= 0 && w[1] <= 0 && w[2] <= 0)
	if !inside {
		return -best
	}
	return best
}

// reference renders s into [h][w][4] premultiplied RGBA.
func reference(s scene, h, w int, sigma float64) []float64 {
	img := make([]float64, h*w*4)
	for i := range h {
		for j := range w {
			px, py := float64(j)+0.5, float64(i)+0.5
			o := img[(i*w+j)*4:][:4]
			for t := range s.n {
				d := signedDist(s.tri, t, px, py)
				a := s.rgba[t*4+3] / (1 + math.Exp(-d/sigma))
				for c := range 3 {
					o[c] = s.rgba[t*4+c]*a + o[c]*(1-a)
				}
				o[3] = a + o[3]*(1-a)
			}
		}
	}
	return img
}

// refLoss is sum(img * weights).
func refLoss(s scene, h, w int, sigma float64, weights []float64) float64 {
	var l float64
	for i, v := range reference(s, h, w, sigma) {
		l += v * weights[i]
	}
	return l
}

// numericGrad is the central difference of refLoss with respect to every
// value of s.tri and s.rgba.
func numericGrad(s scene, h, w int, sigma float64, weights []float64) (gtri, grgba []float64) {
	const eps = 1e-6
	diff := func(x []float64, i int) float64 {
		keep := x[i]
		x[i] = keep + eps
		up := refLoss(s, h, w, sigma, weights)
		x[i] = keep - eps
		down := refLoss(s, h, w, sigma, weights)
		x[i] = keep
		return (up - down) / (2 * eps)
	}
	gtri = make([]float64, len(s.tri))
	grgba = make([]float64, len(s.rgba))
	for i := range gtri {
		gtri[i] = diff(s.tri, i)
	}
	for i := range grgba {
		grgba[i] = diff(s.rgba, i)
	}
	return gtri, grgba
}

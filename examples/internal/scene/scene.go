// Package scene is the scene the rasterblend examples render: batches of
// random triangles (fixed seed), the CPU reference render that the GPU
// result must match, and the PNG output.
//
// The rules are those of shaders/raster.comp and shaders/blend.comp: exact
// fixed-point edge functions at pixel centres, the last triangle of a batch
// wins, and batches are blended "over" in order into a premultiplied RGBA
// image that starts transparent.
package scene

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"time"
)

const (
	FloatsPerTri = 12   // (x0 y0 x1 y1) (x2 y2 0 0) (r g b a): the 3 vec4 shaders/raster.comp reads
	Tolerance    = 1e-3 // largest accepted |GPU - CPU| per channel
	MaxSize      = 1024 // raster.comp's fixed-point edge functions fit in 32 bits up to here
)

// Params describes a render.
type Params struct {
	Size   int // image width and height in pixels
	Tris   int // triangles per pass
	Passes int // N
}

// Validate checks the ranges the shaders accept.
func (p Params) Validate() error {
	if p.Size < 1 || p.Size > MaxSize || p.Tris < 1 || p.Passes < 1 {
		return fmt.Errorf("need 1 ≤ size ≤ %d, tris ≥ 1 and passes ≥ 1, got %d, %d, %d", MaxSize, p.Size, p.Tris, p.Passes)
	}
	return nil
}

// Geometry returns the triangles of every pass, batch after batch, with a
// fixed seed: small triangles of random colour and alpha 0.35..0.85, vertices
// snapped to the 1/16-pixel grid that raster.comp needs for exact edges.
func Geometry(p Params) []float32 {
	r := rand.New(rand.NewPCG(238, 52))
	s := float64(p.Size)
	snap := func(v float64) float32 { return float32(math.Round(min(max(v, 0), s)*16) / 16) }
	g := make([]float32, 0, p.Passes*p.Tris*FloatsPerTri)
	for range p.Passes * p.Tris {
		cx, cy := r.Float64()*s, r.Float64()*s
		radius := s * (0.04 + 0.12*r.Float64())
		a0 := r.Float64() * 2 * math.Pi
		for v := range 3 {
			a := a0 + float64(v)*2*math.Pi/3 + (r.Float64()-0.5)*1.5
			g = append(g, snap(cx+radius*math.Cos(a)), snap(cy+radius*math.Sin(a)))
		}
		g = append(g, 0, 0, r.Float32(), r.Float32(), r.Float32(), 0.35+0.5*r.Float32())
	}
	return g
}

// Reference renders on the CPU with raster.comp's and blend.comp's rules and
// returns the image (premultiplied RGBA, size*size*4 floats).
func Reference(p Params, geo []float32) []float32 {
	img := make([]float32, p.Size*p.Size*4)
	fixed := func(v float32) int { return int(math.Round(float64(v) * 16)) }
	edge := func(ax, ay, bx, by, cx, cy int) int { return (bx-ax)*(cy-ay) - (by-ay)*(cx-ax) }
	type tri struct {
		x, y   [3]int
		colour [4]float32
	}
	batch := make([]tri, p.Tris)
	for b := range p.Passes {
		for t := range batch {
			v := geo[(b*p.Tris+t)*FloatsPerTri:]
			for j := range 3 {
				batch[t].x[j], batch[t].y[j] = fixed(v[2*j]), fixed(v[2*j+1])
			}
			copy(batch[t].colour[:], v[8:12])
		}
		for y := range p.Size {
			for x := range p.Size {
				cx, cy := x*16+8, y*16+8
				var src [4]float32 // raster: the last covering triangle wins
				for t := len(batch) - 1; t >= 0; t-- {
					tr := &batch[t]
					if cx < min(tr.x[0], tr.x[1], tr.x[2]) || cy < min(tr.y[0], tr.y[1], tr.y[2]) ||
						cx > max(tr.x[0], tr.x[1], tr.x[2]) || cy > max(tr.y[0], tr.y[1], tr.y[2]) {
						continue
					}
					w0 := edge(tr.x[1], tr.y[1], tr.x[2], tr.y[2], cx, cy)
					w1 := edge(tr.x[2], tr.y[2], tr.x[0], tr.y[0], cx, cy)
					w2 := edge(tr.x[0], tr.y[0], tr.x[1], tr.y[1], cx, cy)
					inside := (w0 >= 0 && w1 >= 0 && w2 >= 0) || (w0 <= 0 && w1 <= 0 && w2 <= 0)
					if inside && edge(tr.x[0], tr.y[0], tr.x[1], tr.y[1], tr.x[2], tr.y[2]) != 0 {
						src = tr.colour
						break
					}
				}
				d := img[(y*p.Size+x)*4:][:4] // blend: src over d
				for c := range 3 {
					d[c] = src[c]*src[3] + d[c]*(1-src[3])
				}
				d[3] = src[3] + d[3]*(1-src[3])
			}
		}
	}
	return img
}

// MaxDiff returns the largest |a[i] - b[i]|: +Inf if the lengths differ, NaN
// if a value is NaN.
func MaxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var m float64
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if d > m || math.IsNaN(d) {
			m = d
		}
	}
	return m
}

// WritePNG writes the premultiplied RGBA image composited over white.
func WritePNG(path string, img []float32, size int) error {
	out := image.NewNRGBA(image.Rect(0, 0, size, size))
	to8 := func(v float32) uint8 { return uint8(math.Round(float64(min(max(v, 0), 1)) * 255)) }
	for y := range size {
		for x := range size {
			px := img[(y*size+x)*4:][:4]
			out.SetNRGBA(x, y, color.NRGBA{to8(px[0] + 1 - px[3]), to8(px[1] + 1 - px[3]), to8(px[2] + 1 - px[3]), 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, out); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Timing is one mode's measurements: best and worst time for all passes,
// and the largest difference from the CPU reference.
type Timing struct {
	Name        string
	K           int
	Best, Worst time.Duration
	Diff        float64
}

// Report prints the timing table (speedups against the first row) and,
// when both logical queues share one physical queue, why the pipelined
// modes barely differ; who names what pipelines ("the graph", say). It
// returns an error naming every mode outside Tolerance.
func Report(rows []Timing, passes int, oneQueue bool, who, image string) error {
	fmt.Printf("%-10s  %2s  %9s  %7s  %-13s  %7s  %s\n",
		"mode", "K", "passes/s", "ms/pass", "(range)", "speedup", "max |GPU-CPU|")
	var bad []string
	perPass := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(passes) }
	for _, r := range rows {
		fmt.Printf("%-10s  %2d  %9.1f  %7.2f  %-13s  %6.2fx  %.2g\n", r.Name, r.K,
			float64(passes)/r.Best.Seconds(), perPass(r.Best),
			fmt.Sprintf("(%.2f-%.2f)", perPass(r.Best), perPass(r.Worst)),
			rows[0].Best.Seconds()/r.Best.Seconds(), r.Diff)
		if !(r.Diff < Tolerance) {
			bad = append(bad, fmt.Sprintf("%s K=%d: max |GPU-CPU| = %g, want < %g", r.Name, r.K, r.Diff, Tolerance))
		}
	}
	if oneQueue {
		fmt.Print(oneQueueNote(who))
	}
	if len(bad) > 0 {
		return errors.New(fmt.Sprint(bad))
	}
	fmt.Printf("\nok: every mode matches the CPU reference (< %g); image written to %s\n", Tolerance, image)
	return nil
}

// oneQueueNote explains why the pipelined modes barely beat serialized
// execution when both logical queues share one physical queue; who is what
// does the pipelining ("the graph", say).
func oneQueueNote(who string) string {
	return "\nBoth logical queues run on one physical queue here (lavapipe has one), so\n" +
		"rasterizing and blending never overlap: " + who + " can only save the time\n" +
		"serialized execution spends with the host in the loop (a submit, a wait and a\n" +
		"wake-up, twice per pass). That is small next to a pass, and on a loaded\n" +
		"2-core CPU driver the run-to-run noise can be larger; with two physical\n" +
		"queues the rasterizer would also run ahead of the blender by up to K passes.\n"
}

// Command rasterblend is the two-queue pipeline of Kompute issue #238 as a
// graph: one queue rasterizes geometry passes into a ring of K frames while
// another blends finished frames into an image, the rasterizer running at most
// K passes ahead of the blender. No timeline value is picked by hand: the
// graph infers every dependency from what each node reads and writes, and
// orders the two queues on the GPU with the fewest waits that cover them.
//
// The render of N passes is one graph. Pass i (0 ≤ i < N) records, in
// program order:
//
//	fill    batch[i mod K] = i                              queue 0
//	raster  triangles of batch[i mod K] -> frame[i mod K]  queue 0
//	blend   image = frame[i mod K] over image               queue 1
//
// From these accesses Compile derives the edges that
// examples/rasterblend-timeline writes by hand: blend i reads the frame
// raster i wrote (a wait on queue 0), and raster i overwrites the frame blend
// i-K read (a wait on queue 1): that write-after-read edge is the bounded
// lookahead, the rasterizer never more than K passes ahead. Blends follow each
// other through the image (read-after-write, on their own queue). The graph
// starts with a fill of the image and ends with a download of it, so every
// run renders from scratch.
//
// A graph of K passes run N/K times would bound the lookahead too, but
// coarsely: runs of one Exec are ordered as a whole, so the rasterizer would
// wait for the last blend of the previous run at every run boundary. One
// graph for the whole render keeps the bound at exactly K passes everywhere
// and needs no N mod K remainder.
//
// Compile records the command buffers once; every run replays them. The
// program prints the schedule of a short render (K = 2, 4 passes); -dot
// writes the whole K = 2 graph, with its queues and waits, in Graphviz's
// language.
//
// Every run is checked against a CPU render with the same rules (package
// examples/internal/scene); the image is written as a PNG composited over
// white. The runs time the graph with K = 1, 2, 4, 8 against serialized
// execution (per pass: a raster graph, host wait, a blend graph, host wait),
// and the program exits 1 if any run differs from the CPU.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/examples/internal/scene"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
)

// The logical queues the example pins its nodes to.
const (
	rasterQueue = 0
	blendQueue  = 1
)

func main() {
	var p scene.Params
	flag.IntVar(&p.Passes, "passes", 64, "geometry passes N")
	flag.IntVar(&p.Size, "size", 256, "image width and height in pixels")
	flag.IntVar(&p.Tris, "tris", 32, "triangles per pass")
	reps := flag.Int("reps", 3, "timed runs of each mode (the best is shown)")
	out := flag.String("out", "rasterblend.png", "PNG file to write")
	dot := flag.String("dot", "", "write the K = 2 graph's schedule in Graphviz's language to this file")
	flag.Parse()
	if err := run(p, *reps, *out, *dot); err != nil {
		fmt.Fprintln(os.Stderr, "rasterblend:", err)
		os.Exit(1)
	}
}

func run(p scene.Params, reps int, out, dot string) (err error) {
	if err := p.Validate(); err != nil {
		return err
	}
	if reps < 1 {
		return fmt.Errorf("need reps ≥ 1, got %d", reps)
	}
	mgr, err := vkflow.New(vkflow.WithQueues(2, false))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, mgr.Close()) }() // closes the renderers' objects too
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	physical := map[int]bool{}
	for _, q := range mgr.Queues() {
		physical[q.Physical] = true
	}
	fmt.Printf("device: %s; 2 logical queues on %d physical\n", mgr.Device().Name, len(physical))

	geo := scene.Geometry(p)
	preview := p
	preview.Passes = min(p.Passes, 4)
	r, err := newRenderer(mgr, preview, geo, 2)
	if err != nil {
		return err
	}
	fmt.Printf("\nschedule of a %d-pass render with K = 2:\n%s\n", preview.Passes, r.exec.String())
	if err := r.close(); err != nil {
		return err
	}

	fmt.Printf("%d passes of %d triangles into a %dx%d image, best of %d runs per mode\n", p.Passes, p.Tris, p.Size, p.Size, reps)
	start := time.Now()
	want := scene.Reference(p, geo)
	fmt.Printf("CPU reference: %v\n\n", time.Since(start).Round(time.Millisecond))

	// One renderer per K, and one for serialized execution. A first run,
	// untimed, lets lavapipe compile its shaders (it does so at the first
	// dispatch). Then the modes take turns, reps times, each run checked
	// against the CPU; the table shows each mode's best time, the one least
	// disturbed by whatever else the machine runs, and the range of its times
	// per pass, which shows how much that was.
	type mode struct {
		name        string
		k           int
		r           renderer
		best, worst time.Duration
		diff        float64
	}
	s, err := newSerialized(mgr, p, geo)
	if err != nil {
		return err
	}
	modes := []*mode{{name: "serialized", k: 1, r: s}}
	defer func() {
		for _, md := range modes {
			err = errors.Join(err, md.r.close())
		}
	}()
	for _, k := range []int{1, 2, 4, 8} {
		r, err := newRenderer(mgr, p, geo, k)
		if err != nil {
			return err
		}
		if k == 2 && dot != "" {
			if err := os.WriteFile(dot, []byte(r.exec.DOT()), 0o644); err != nil {
				return err
			}
		}
		modes = append(modes, &mode{name: "graph", k: k, r: r})
	}
	for _, md := range modes {
		if _, err := md.r.render(ctx); err != nil {
			return fmt.Errorf("%s K=%d: %w", md.name, md.k, err)
		}
	}
	var last []float32
	for range reps {
		for _, md := range modes {
			start := time.Now()
			img, err := md.r.render(ctx)
			elapsed := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s K=%d: %w", md.name, md.k, err)
			}
			if md.best == 0 || elapsed < md.best {
				md.best = elapsed
			}
			md.worst = max(md.worst, elapsed)
			last = img
			md.diff = max(md.diff, scene.MaxDiff(img, want))
		}
	}
	if err := scene.WritePNG(out, last, p.Size); err != nil {
		return err
	}

	rows := make([]scene.Timing, len(modes))
	for i, md := range modes {
		rows[i] = scene.Timing{Name: md.name, K: md.k, Best: md.best, Worst: md.worst, Diff: md.diff}
	}
	return scene.Report(rows, p.Passes, len(physical) == 1, "the graph", out)
}

// renderer renders the scene and returns the image (premultiplied RGBA,
// size*size*4 floats, owned by the renderer: valid until its next render).
type renderer interface {
	render(ctx context.Context) ([]float32, error)
	close() error
}

// owned collects what a renderer creates, to close it in reverse order.
type owned []interface{ Close() error }

func (o *owned) keep(c interface{ Close() error }) { *o = append(*o, c) }

func (o owned) close() error {
	var errs []error
	for i := len(o) - 1; i >= 0; i-- {
		errs = append(errs, o[i].Close())
	}
	return errors.Join(errs...)
}

// scene tensors and algorithms shared by both kinds of renderer.
type gpuScene struct {
	owned
	tris          *tensor.Tensor   // every batch's triangles
	image         *tensor.Tensor   // size*size vec4, premultiplied RGBA
	batch, frames []*tensor.Tensor // per ring slot: the batch index, the rasterized frame
	raster, blend *algorithm.Algorithm
	p             scene.Params
}

// newGPUScene uploads geo and makes a ring of k slots.
func newGPUScene(m *vkflow.Manager, p scene.Params, geo []float32, k int) (s *gpuScene, err error) {
	s = &gpuScene{p: p}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.close())
		}
	}()
	n := p.Size * p.Size
	if s.tris, err = tensor.FromSlice(m, geo); err != nil {
		return nil, err
	}
	s.keep(s.tris)
	if s.image, err = tensor.New(m, tensor.Float32, []int{p.Size, p.Size, 4}); err != nil {
		return nil, err
	}
	s.keep(s.image)
	for range k {
		b, err := tensor.New(m, tensor.Float32, []int{1})
		if err != nil {
			return nil, err
		}
		s.keep(b)
		f, err := tensor.New(m, tensor.Float32, []int{n, 4}, tensor.In(tensor.Storage)) // never leaves the GPU
		if err != nil {
			return nil, err
		}
		s.keep(f)
		s.batch, s.frames = append(s.batch, b), append(s.frames, f)
	}
	// One algorithm of each kind, bound to a slot's tensors before each
	// dispatch is recorded (a node keeps the bindings it saw).
	groups := uint32((p.Size + 15) / 16)
	if s.raster, err = algorithm.New(m, shaders.Raster, []*tensor.Tensor{s.tris, s.batch[0], s.frames[0]},
		algorithm.Workgroups(groups, groups, 1)); err != nil {
		return nil, err
	}
	s.keep(s.raster)
	if s.blend, err = algorithm.New(m, shaders.Blend, []*tensor.Tensor{s.frames[0], s.image},
		algorithm.Workgroups(uint32((n+255)/256), 1, 1)); err != nil {
		return nil, err
	}
	s.keep(s.blend)
	return s, nil
}

// rasterPass records the rasterization of the batch whose index slot
// holds into that slot's frame.
func (s *gpuScene) rasterPass(g *graph.Graph, slot int) (graph.Node, error) {
	if err := s.raster.Bind(s.tris, s.batch[slot], s.frames[slot]); err != nil {
		return graph.Node{}, err
	}
	return g.Dispatch(s.raster, uint32(s.p.Size), uint32(s.p.Size), uint32(s.p.Tris)), g.Err()
}

// blendPass records image = frame[slot] over image.
func (s *gpuScene) blendPass(g *graph.Graph, slot int) (graph.Node, error) {
	if err := s.blend.Bind(s.frames[slot], s.image); err != nil {
		return graph.Node{}, err
	}
	return g.Dispatch(s.blend), g.Err()
}

// graphRenderer renders the whole scene with one run of one graph over a
// ring of K slots.
type graphRenderer struct {
	*gpuScene
	exec   *graph.Exec
	pixels []float32 // the image, downloaded by every run
}

// newRenderer records the render of p with a ring of k slots and compiles
// it.
func newRenderer(m *vkflow.Manager, p scene.Params, geo []float32, k int) (r *graphRenderer, err error) {
	s, err := newGPUScene(m, p, geo, k)
	if err != nil {
		return nil, err
	}
	r = &graphRenderer{gpuScene: s, pixels: make([]float32, p.Size*p.Size*4)}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	g, err := graph.New(m)
	if err != nil {
		return nil, err
	}
	g.Input(s.tris) // written by the host
	g.Fill(s.image, float32(0)).Named("clear").OnQueue(blendQueue)
	for i := range p.Passes {
		slot := i % k
		g.Fill(s.batch[slot], float32(i)).Named(fmt.Sprintf("batch %d", i)).OnQueue(rasterQueue)
		raster, err := s.rasterPass(g, slot)
		if err != nil {
			return nil, err
		}
		raster.Named(fmt.Sprintf("raster %d", i)).OnQueue(rasterQueue)
		blend, err := s.blendPass(g, slot)
		if err != nil {
			return nil, err
		}
		blend.Named(fmt.Sprintf("blend %d", i)).OnQueue(blendQueue)
	}
	g.Download(s.image, r.pixels).Named("read image")
	if r.exec, err = g.Compile(); err != nil {
		return nil, err
	}
	r.keep(r.exec) // closed first
	return r, nil
}

func (r *graphRenderer) render(ctx context.Context) ([]float32, error) {
	return r.pixels, r.exec.Run(ctx)
}

// serialized renders pass by pass with the host in the loop, all that a
// fence-only API such as Kompute's eval() allows: for each pass, a raster
// graph, a host wait, a blend graph, a host wait.
type serialized struct {
	*gpuScene
	clear, raster, blend, read *graph.Exec
	index                      []float32 // the batch index, uploaded by each raster run
	pixels                     []float32
}

func newSerialized(m *vkflow.Manager, p scene.Params, geo []float32) (r *serialized, err error) {
	s, err := newGPUScene(m, p, geo, 1)
	if err != nil {
		return nil, err
	}
	r = &serialized{gpuScene: s, index: make([]float32, 1), pixels: make([]float32, p.Size*p.Size*4)}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	compile := func(record func(g *graph.Graph) error) (*graph.Exec, error) {
		g, err := graph.New(m)
		if err != nil {
			return nil, err
		}
		if err := record(g); err != nil {
			return nil, err
		}
		e, err := g.Compile()
		if err != nil {
			return nil, err
		}
		r.keep(e)
		return e, nil
	}
	if r.clear, err = compile(func(g *graph.Graph) error {
		g.Fill(s.image, float32(0)).OnQueue(blendQueue)
		return nil
	}); err != nil {
		return nil, err
	}
	if r.raster, err = compile(func(g *graph.Graph) error {
		g.Input(s.tris)
		g.Upload(s.batch[0], r.index).OnQueue(rasterQueue)
		n, err := s.rasterPass(g, 0)
		if err == nil {
			n.OnQueue(rasterQueue)
		}
		return err
	}); err != nil {
		return nil, err
	}
	if r.blend, err = compile(func(g *graph.Graph) error {
		g.Input(s.frames[0], s.image) // written by the other graphs
		n, err := s.blendPass(g, 0)
		if err == nil {
			n.OnQueue(blendQueue)
		}
		return err
	}); err != nil {
		return nil, err
	}
	if r.read, err = compile(func(g *graph.Graph) error {
		g.Input(s.image)
		g.Download(s.image, r.pixels).OnQueue(blendQueue)
		return nil
	}); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *serialized) render(ctx context.Context) ([]float32, error) {
	if err := r.clear.Run(ctx); err != nil {
		return nil, err
	}
	for i := range r.p.Passes {
		r.index[0] = float32(i) // read when the run is submitted
		if err := r.raster.Run(ctx); err != nil {
			return nil, err
		}
		if err := r.blend.Run(ctx); err != nil {
			return nil, err
		}
	}
	return r.pixels, r.read.Run(ctx)
}

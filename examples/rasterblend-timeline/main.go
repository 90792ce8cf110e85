// Command rasterblend-timeline is the low-level tutorial: the two-queue
// pipeline of Kompute issue #238 written with sequences and timeline values
// picked by hand. One queue rasterizes geometry passes into a ring of K layers
// while another blends finished layers into an image, the rasterizer running
// at most K passes ahead of the blender, all ordered on the GPU by timeline
// semaphores. examples/rasterblend renders the same scene as a graph, whose
// dependencies are inferred; this program shows what a graph spares its user.
//
// Pass i (0 ≤ i < N) rasterizes batch i of random triangles (fixed seed) into
// ring slot i mod K on logical queue 0, and blends that slot over the image on
// logical queue 1. Two timelines count finished passes:
//
//	raster i: waits blendTL ≥ i-K+1 (if i ≥ K), signals rasterTL = i+1
//	blend i:  waits rasterTL ≥ i+1,             signals blendTL = i+1
//
// so blendTL = j means passes 0..j-1 are blended. Raster i overwrites the slot
// that pass i-K used, so it waits for blend i-K (blendTL ≥ i-K+1): the
// rasterizer is never more than K passes ahead. Blends run in order on their
// queue, and every sequence begins with a barrier against earlier work on its
// queue, so blend i sees the image blend i-1 wrote. A pipeline is run several
// times and timeline values only go up, so a later run adds to every value
// above the value where the previous run ended.
//
// Nothing is recorded per pass: each ring slot has one raster and one blend
// sequence, recorded once and submitted again every K passes. The batch a
// raster sequence draws lives on the GPU: a one-float counter per slot that
// the same sequence advances by K (shaders.Saxpy) after rasterizing, so slot
// s draws batches s, s+K, s+2K, ... The host hands over all 2N submits at
// once (Submit never blocks; vkflow holds each one until its waits are
// promised) and waits once, for blendTL = N.
//
// Every run is checked against a CPU render with the same rules (package
// examples/internal/scene: exact fixed-point edge functions at pixel centres,
// last triangle of a batch wins, "over" blending in pass order); the image is written as a PNG composited
// over white. The runs time the pipeline with K = 1, 2, 4, 8 against
// serialized execution (raster Eval, host wait, blend Eval, host wait, for
// each pass), and the program exits 1 if any run differs from the CPU.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/examples/internal/scene"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

func main() {
	var p scene.Params
	flag.IntVar(&p.Passes, "passes", 64, "geometry passes N")
	flag.IntVar(&p.Size, "size", 256, "image width and height in pixels")
	flag.IntVar(&p.Tris, "tris", 32, "triangles per pass")
	reps := flag.Int("reps", 3, "timed runs of each mode (the best is shown)")
	out := flag.String("out", "rasterblend.png", "PNG file to write")
	flag.Parse()
	if err := run(p, *reps, *out); err != nil {
		fmt.Fprintln(os.Stderr, "rasterblend-timeline:", err)
		os.Exit(1)
	}
}

func run(p scene.Params, reps int, out string) (err error) {
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
	defer func() { err = errors.Join(err, mgr.Close()) }() // closes the pipelines too
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	physical := map[int]bool{}
	for _, q := range mgr.Queues() {
		physical[q.Physical] = true
	}
	fmt.Printf("device: %s; 2 logical queues on %d physical\n", mgr.Device().Name, len(physical))
	fmt.Printf("%d passes of %d triangles into a %dx%d image, best of %d runs per mode\n", p.Passes, p.Tris, p.Size, p.Size, reps)

	geo := scene.Geometry(p)
	start := time.Now()
	want := scene.Reference(p, geo)
	fmt.Printf("CPU reference: %v\n\n", time.Since(start).Round(time.Millisecond))

	// One pipeline per K; serialized execution uses the K = 1 one. A first
	// run of K passes, untimed, lets lavapipe compile its shaders (it does so
	// at the first dispatch). Then the modes take turns, reps times, each run
	// checked against the CPU; the table shows each mode's best time, the one
	// least disturbed by whatever else the machine runs, and the range of its
	// times per pass, which shows how much that was.
	type mode struct {
		name        string
		pl          *pipeline
		serialized  bool
		best, worst time.Duration
		diff        float64
	}
	var modes []*mode
	for _, k := range []int{1, 2, 4, 8} {
		pl, err := newPipeline(mgr, p, geo, k)
		if err != nil {
			return err
		}
		if _, err := pl.run(ctx, k, false); err != nil {
			return err
		}
		if k == 1 {
			modes = append(modes, &mode{name: "serialized", pl: pl, serialized: true})
		}
		modes = append(modes, &mode{name: "pipelined", pl: pl})
	}
	var last []float32
	for range reps {
		for _, md := range modes {
			elapsed, err := md.pl.run(ctx, p.Passes, md.serialized)
			if err != nil {
				return fmt.Errorf("%s K=%d: %w", md.name, len(md.pl.raster), err)
			}
			if md.best == 0 || elapsed < md.best {
				md.best = elapsed
			}
			md.worst = max(md.worst, elapsed)
			if last, err = md.pl.pixels(); err != nil {
				return err
			}
			md.diff = max(md.diff, scene.MaxDiff(last, want))
		}
	}
	if err := scene.WritePNG(out, last, p.Size); err != nil {
		return err
	}

	rows := make([]scene.Timing, len(modes))
	for i, md := range modes {
		rows[i] = scene.Timing{Name: md.name, K: len(md.pl.raster), Best: md.best, Worst: md.worst, Diff: md.diff}
	}
	return scene.Report(rows, p.Passes, len(physical) == 1, "pipelining", out)
}

// pipeline is the GPU side of the render with a ring of K slots: tensors,
// algorithms and sequences recorded once, and run any number of times.
type pipeline struct {
	m                 *vkflow.Manager
	p                 scene.Params
	image             *tensor.Tensor       // size*size vec4, premultiplied RGBA
	counters          []*tensor.Tensor     // per slot: the next batch it rasterizes
	raster, blend     []*sequence.Sequence // per slot
	clear             *sequence.Sequence   // image = 0
	rasterTL, blendTL *timeline.Timeline   // pass i of a run signals base+i+1
	base              uint64               // the timelines' value before the run
	order             submitOrder          // interleaved, except in tests
	owned             []interface{ Close() error }
}

// newPipeline uploads geo and records the per-slot sequences.
func newPipeline(m *vkflow.Manager, p scene.Params, geo []float32, k int) (pl *pipeline, err error) {
	pl = &pipeline{m: m, p: p}
	defer func() {
		if err != nil {
			err = errors.Join(err, pl.close())
		}
	}()
	keep := func(c interface{ Close() error }) { pl.owned = append(pl.owned, c) }
	n := p.Size * p.Size
	tris, err := tensor.FromSlice(m, geo)
	if err != nil {
		return nil, err
	}
	keep(tris)
	one, err := tensor.FromSlice(m, []float32{1})
	if err != nil {
		return nil, err
	}
	keep(one)
	if pl.image, err = tensor.New(m, tensor.Float32, []int{p.Size, p.Size, 4}); err != nil {
		return nil, err
	}
	keep(pl.image)
	slots := make([]*tensor.Tensor, k)
	for s := range k {
		// The layers never leave the GPU.
		if slots[s], err = tensor.New(m, tensor.Float32, []int{n, 4}, tensor.In(tensor.Storage)); err != nil {
			return nil, err
		}
		keep(slots[s])
		c, err := tensor.New(m, tensor.Float32, []int{1}) // set by reset
		if err != nil {
			return nil, err
		}
		keep(c)
		pl.counters = append(pl.counters, c)
	}

	// One algorithm of each kind, re-bound to each slot's tensors before
	// recording that slot's sequences (a recording keeps the bindings it saw).
	groups := uint32((p.Size + 15) / 16)
	raster, err := algorithm.New(m, shaders.Raster, []*tensor.Tensor{tris, pl.counters[0], slots[0]},
		algorithm.Workgroups(groups, groups, 1))
	if err != nil {
		return nil, err
	}
	keep(raster)
	advance, err := algorithm.New(m, shaders.Saxpy, []*tensor.Tensor{one, pl.counters[0]}) // counter += alpha*1
	if err != nil {
		return nil, err
	}
	keep(advance)
	blend, err := algorithm.New(m, shaders.Blend, []*tensor.Tensor{slots[0], pl.image},
		algorithm.Workgroups(uint32((n+255)/256), 1, 1))
	if err != nil {
		return nil, err
	}
	keep(blend)
	seq := func(queue int) *sequence.Sequence {
		s, e := sequence.New(m, queue)
		if e != nil {
			err = errors.Join(err, e)
			return nil
		}
		keep(s)
		return s
	}
	for s := range k {
		rs, bs := seq(0), seq(1)
		if err != nil {
			return nil, err
		}
		err = errors.Join(raster.Bind(tris, pl.counters[s], slots[s]), advance.Bind(one, pl.counters[s]),
			blend.Bind(slots[s], pl.image))
		if err != nil {
			return nil, err
		}
		// Rasterize batch counter[s] into slot s, then counter[s] += K.
		rs.Dispatch(raster, uint32(p.Size), uint32(p.Size), uint32(p.Tris)).Dispatch(advance, float32(k))
		bs.Dispatch(blend).SyncLocal(pl.image) // image = slot s over image
		if err := errors.Join(rs.Err(), bs.Err()); err != nil {
			return nil, err
		}
		pl.raster, pl.blend = append(pl.raster, rs), append(pl.blend, bs)
	}
	if pl.clear = seq(1); err != nil {
		return nil, err
	}
	if pl.rasterTL, err = timeline.New(m, 0); err != nil {
		return nil, err
	}
	keep(pl.rasterTL)
	if pl.blendTL, err = timeline.New(m, 0); err != nil {
		return nil, err
	}
	keep(pl.blendTL)
	return pl, pl.clear.Fill(pl.image, float32(0)).Err()
}

// reset prepares a run: a transparent image and each slot's counter at its
// first batch (slot s draws batches s, s+K, ...). The timelines stay: values
// only go up, so each pipelined run numbers its passes from base, where the
// last one ended. No run may be in flight.
func (pl *pipeline) reset(ctx context.Context) error {
	for s, c := range pl.counters {
		if err := tensor.Write(c, []float32{float32(s)}); err != nil {
			return err
		}
	}
	return pl.clear.Eval(ctx)
}

// run resets the pipeline and renders passes 0..n-1, returning the time from
// the first submit to the end of the last host wait.
func (pl *pipeline) run(ctx context.Context, n int, serialized bool) (time.Duration, error) {
	if err := pl.reset(ctx); err != nil {
		return 0, err
	}
	start := time.Now()
	var err error
	if serialized {
		err = pl.runSerialized(ctx, n)
	} else {
		err = pl.runPipelined(ctx, n)
	}
	return time.Since(start), err
}

// runPipelined submits every pass at once and waits once, for blendTL to
// reach pass n-1's value.
func (pl *pipeline) runPipelined(ctx context.Context, n int) error {
	k := len(pl.raster)
	pending := make([]sequence.Pending, 0, 2*n)
	done := func(i int) uint64 { return pl.base + uint64(i) + 1 } // pass i's value: i+1 in the first run
	raster := func(i int) {
		opts := []sequence.SubmitOption{sequence.Signal(pl.rasterTL, done(i))}
		if i >= k { // slot i mod K is free once blend i-K is done
			opts = append(opts, sequence.Wait(pl.blendTL, done(i-k)))
		}
		pending = append(pending, pl.raster[i%k].Submit(ctx, opts...))
	}
	blend := func(i int) {
		pending = append(pending, pl.blend[i%k].Submit(ctx,
			sequence.Wait(pl.rasterTL, done(i)), sequence.Signal(pl.blendTL, done(i))))
	}
	switch pl.order {
	case rastersFirst:
		for i := range n {
			raster(i)
		}
		for i := range n {
			blend(i)
		}
	case blendsFirst:
		for i := range n {
			blend(i)
		}
		for i := range n {
			raster(i)
		}
	default:
		for i := range n {
			raster(i)
			blend(i)
		}
	}
	last := done(n - 1)
	pl.base = last // the next run starts above, whether this one succeeds or not
	check := func() error {
		for _, p := range pending {
			if err := p.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check(); err != nil { // refused up front: the wait would never end
		return err
	}
	if err := pl.blendTL.Wait(ctx, last); err != nil {
		return err
	}
	return check() // failed on its way to the driver
}

// submitOrder is the order in which runPipelined hands its submits to
// vkflow. Whatever it is, the GPU must run them in the order the timelines
// impose: the tests check that with the two orders that would go wrong
// without each kind of wait (on one queue, where execution follows the order
// submits reach the driver, only such orders can show a missing wait).
type submitOrder int

const (
	interleaved  submitOrder = iota // raster 0, blend 0, raster 1, ...
	rastersFirst                    // every raster, then every blend
	blendsFirst                     // every blend, then every raster
)

// runSerialized runs raster then blend for each pass, waiting on the host
// after each: all that a fence-only API such as Kompute's eval() allows.
func (pl *pipeline) runSerialized(ctx context.Context, n int) error {
	k := len(pl.raster)
	for i := range n {
		if err := pl.raster[i%k].Eval(ctx); err != nil {
			return err
		}
		if err := pl.blend[i%k].Eval(ctx); err != nil {
			return err
		}
	}
	return nil
}

// pixels returns a copy of the image (the accessor's slice aliases memory
// that close frees).
func (pl *pipeline) pixels() ([]float32, error) {
	got, err := pl.image.Float32s()
	return slices.Clone(got), err
}

func (pl *pipeline) close() error {
	var errs []error
	for _, c := range slices.Backward(pl.owned) {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// render renders p on a fresh pipeline with a ring of k slots and returns the
// image (premultiplied RGBA, size*size*4 floats).
func render(ctx context.Context, m *vkflow.Manager, p scene.Params, geo []float32, k int, serialized bool) (img []float32, err error) {
	pl, err := newPipeline(m, p, geo, k)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, pl.close()) }()
	if _, err := pl.run(ctx, p.Passes, serialized); err != nil {
		return nil, err
	}
	return pl.pixels()
}

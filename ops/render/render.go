package render

import (
	"errors"

	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// Options describe a render of N triangles (SoftRender, Record).
type Options struct {
	// Height and Width are the image's size in pixels (both at least 1).
	Height, Width int
	// Sigma is the soft edge's width in pixels (> 0; 0 means 1).
	Sigma float64
	// Batch is how many triangles one layer takes (0 means 8).
	Batch int
	// InFlight is Record's ring of layers: the rasterizer runs at most
	// InFlight layers ahead of the blender (0 means 2). SoftRender keeps
	// every layer (its backward reads them) and ignores it.
	InFlight int
	// RasterQueue and BlendQueue are the logical queues the layers are
	// rasterized and blended on (examples use 0 and 1; equal: one queue;
	// -1: the graph compiler's choice).
	RasterQueue, BlendQueue int
}

// DefaultBatch and DefaultInFlight are Options' defaults.
const (
	DefaultBatch    = 8
	DefaultInFlight = 2
)

// resolved returns o with its defaults filled in, or an error naming a
// bad field.
func (o Options) resolved() (Options, error) {
	if o.Sigma == 0 {
		o.Sigma = 1
	}
	if o.Batch == 0 {
		o.Batch = DefaultBatch
	}
	if o.InFlight == 0 {
		o.InFlight = DefaultInFlight
	}
	switch {
	case o.Height < 1 || o.Width < 1:
		return o, core.Invalid("render: size %dx%d: want Height and Width at least 1", o.Height, o.Width)
	case o.Batch < 0:
		return o, core.Invalid("render: Batch %d: want at least 1 (0: %d)", o.Batch, DefaultBatch)
	case o.InFlight < 0:
		return o, core.Invalid("render: InFlight %d: want at least 1 (0: %d)", o.InFlight, DefaultInFlight)
	case o.RasterQueue < -1 || o.BlendQueue < -1:
		return o, core.Invalid("render: queues %d and %d: want a logical queue, or -1", o.RasterQueue, o.BlendQueue)
	}
	return o, nil
}

// layers returns the attributes of each layer's soft_raster call: one
// transparent layer when there are no triangles.
func (o Options) layers(n int) []opcore.Attrs {
	sigma := o.Sigma
	at := func(start, count int) opcore.Attrs {
		return opcore.Attrs{Shape: []int{o.Height, o.Width}, Sigma: &sigma, Start: start, Count: count}
	}
	if n == 0 {
		return []opcore.Attrs{at(0, 0)}
	}
	var ats []opcore.Attrs
	for start := 0; start < n; start += o.Batch {
		ats = append(ats, at(start, min(o.Batch, n-start)))
	}
	return ats
}

// check refuses bad inputs before anything is recorded, so that a refused
// call leaves the tape or graph as it was.
func check(owner opcore.Owner, tri, rgba *tensor.Tensor, at opcore.Attrs) error {
	op, err := opcore.NewOp(owner, "soft_raster", tri, rgba)
	if err != nil {
		return err
	}
	_, err = checkLayer(op, tri, rgba, at)
	return errors.Join(err, op.Close())
}

// SoftRender records on tp the soft render of triangles tri [N, 3, 2]
// (vertex x, y in pixels; pixel (i, j) has its centre at (j + 1/2, i +
// 1/2)) with colours rgba [N, 4] (straight colour and opacity), float32 or
// float64, and returns the image [Height, Width, 4], premultiplied RGBA,
// owned by the tape. Each run of tp's graph renders; Tape.Grad
// differentiates it with respect to tri and rgba.
//
// The formula (docs/RENDERING.md): for triangle t and pixel centre p, d is
// the distance from p to t's nearest edge, positive inside or on t and
// negative outside; the coverage is D = sigmoid(d / Sigma) and A =
// alpha_t D; triangles are composited with "over", in index order, onto a
// transparent image.
//
// The graph: layer b (triangles b*Batch .. b*Batch+Batch-1 composited over
// transparent, op soft_raster) on RasterQueue, and image_b = layer_b over
// image_{b-1} (op over) on BlendQueue, so the rasterizer works on later
// layers while the blender composites earlier ones. The tape's queue pin
// is restored when SoftRender returns. Bad input is refused before
// anything is recorded.
func SoftRender(tp *opcore.Tape, tri, rgba *tensor.Tensor, opt Options) (*tensor.Tensor, error) {
	if tp == nil {
		return nil, core.Invalid("render.SoftRender: nil tape")
	}
	o, err := opt.resolved()
	if err != nil {
		return nil, err
	}
	if tri == nil || rgba == nil {
		return nil, core.Invalid("render.SoftRender: nil tri or rgba")
	}
	ats := o.layers(tri.Shape()[0])
	if err := check(tp.Owner(), tri, rgba, ats[0]); err != nil {
		return nil, err
	}
	prev := tp.Queue()
	defer tp.OnQueue(prev)
	var img *tensor.Tensor
	for b, at := range ats {
		tp.OnQueue(o.RasterQueue)
		layer, err := tp.Call1("soft_raster", at, tri, rgba)
		if err != nil {
			return nil, err
		}
		if b == 0 {
			img = layer // layer 0 over transparent is layer 0
			continue
		}
		tp.OnQueue(o.BlendQueue)
		if img, err = tp.Call1("over", opcore.Attrs{}, layer, img); err != nil {
			return nil, err
		}
	}
	return img, nil
}

// Renderer is a forward-only soft render recorded into a graph (Record):
// a ring of InFlight layers and one image, blended in place.
type Renderer struct {
	image  *tensor.Tensor
	layers []*tensor.Tensor
	ops    []*opcore.Op
	closed bool
}

// Record adds to g the forward-only soft render of tri and rgba (as
// SoftRender) into an image it makes, with a ring of InFlight layers:
// layer b is rasterized into ring slot b mod InFlight on RasterQueue and
// blended over the image in place on BlendQueue. The graph orders
// rasterizing layer b after blending layer b - InFlight (the slot's last
// read), so the rasterizer runs at most InFlight layers ahead: the
// timeline pattern of examples/rasterblend, inferred by the graph. The
// graph's first node clears the image, so every run renders anew. Bad
// input is refused before anything is added to g. Close the Renderer after
// the Execs compiled from g.
func Record(g *graph.Graph, owner opcore.Owner, tri, rgba *tensor.Tensor, opt Options) (r *Renderer, err error) {
	if g == nil || tri == nil || rgba == nil {
		return nil, core.Invalid("render.Record: nil graph, tri or rgba")
	}
	o, err := opt.resolved()
	if err != nil {
		return nil, err
	}
	ats := o.layers(tri.Shape()[0])
	if err := check(owner, tri, rgba, ats[0]); err != nil {
		return nil, err
	}
	r = &Renderer{}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Close())
			r = nil
		}
	}()
	dt := tri.Dtype()
	if r.image, err = tensor.New(owner, dt, []int{o.Height, o.Width, 4}); err != nil {
		return r, err
	}
	for range min(o.InFlight, len(ats)) {
		l, err := tensor.New(owner, dt, []int{o.Height, o.Width, 4}, tensor.In(tensor.Storage))
		if err != nil {
			return r, err
		}
		r.layers = append(r.layers, l)
	}
	// Every op is prepared before the graph sees a node, so that a failure
	// leaves g as it was.
	for b, at := range ats {
		l := r.layers[b%len(r.layers)]
		op, err := opcore.Prepare(owner, "soft_raster", []*tensor.Tensor{tri, rgba}, []*tensor.Tensor{l}, at)
		if err != nil {
			return r, err
		}
		r.ops = append(r.ops, op)
		if op, err = opcore.Prepare(owner, "over", []*tensor.Tensor{l, r.image}, []*tensor.Tensor{r.image}, opcore.Attrs{}); err != nil {
			return r, err
		}
		r.ops = append(r.ops, op)
	}
	var zero any = float32(0)
	if dt == tensor.Float64 {
		zero = float64(0)
	}
	clear := g.Fill(r.image, zero).Named("clear")
	if o.BlendQueue >= 0 {
		clear.OnQueue(o.BlendQueue)
	}
	for i, op := range r.ops {
		q := o.RasterQueue
		if i%2 == 1 {
			q = o.BlendQueue
		}
		n := op.AddTo(g)
		if q >= 0 {
			n.OnQueue(q)
		}
	}
	return r, g.Err()
}

// Image returns the rendered image [Height, Width, 4] (premultiplied
// RGBA), owned by the Renderer.
func (r *Renderer) Image() *tensor.Tensor { return r.image }

// Close releases the Renderer's ops, layers and image. Idempotent.
func (r *Renderer) Close() error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, op := range r.ops {
		errs = append(errs, op.Close())
	}
	for _, l := range r.layers {
		errs = append(errs, l.Close())
	}
	if r.image != nil {
		errs = append(errs, r.image.Close())
	}
	return errors.Join(errs...)
}

package render

import (
	"math"
	"slices"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// The rasterizer's ops, by name in the registry (Go, C and Python call
// them as any op):
//
//	soft_raster(tri [N,3,2], rgba [N,4]) -> layer [H,W,4]
//	    triangles start .. start+count-1 composited over a transparent
//	    layer; attributes shape [H, W], sigma, start, count. VJP:
//	    soft_raster_vjp.
//	over(src [...,4], dst [...,4]) -> src over dst (premultiplied). VJP:
//	    over_vjp.
//	soft_raster_vjp(tri, rgba, g) -> (gtri, grgba), over_vjp(g, src, dst)
//	    -> (gsrc, gdst): the VJPs' kernels.

func init() {
	opcore.DefSchema("2 (tri, rgba)", 1, []string{"shape", "sigma", "start", "count"}, "soft_raster")
	opcore.DefSchema("3 (tri, rgba, g)", 2, []string{"shape", "sigma", "start", "count"}, "soft_raster_vjp")
	opcore.DefSchema("2 (src, dst)", 1, nil, "over")
	opcore.DefSchema("3 (g, src, dst)", 2, nil, "over_vjp")
	opcore.Builtin("soft_raster", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("soft_raster", in, 2); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("soft_raster", out, 1); err != nil {
			return nil, err
		}
		return rasterOp(o, in[0], in[1], at, opcore.OutAt(out, 0))
	})
	opcore.Builtin("soft_raster_vjp", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("soft_raster_vjp", in, 3); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("soft_raster_vjp", out, 2); err != nil {
			return nil, err
		}
		return rasterVJPOp(o, in[0], in[1], in[2], at, opcore.OutAt(out, 0), opcore.OutAt(out, 1))
	})
	opcore.Builtin("over", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("over", in, 2); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("over", out, 1); err != nil {
			return nil, err
		}
		return overOp(o, in[0], in[1], opcore.OutAt(out, 0))
	})
	opcore.Builtin("over_vjp", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("over_vjp", in, 3); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("over_vjp", out, 2); err != nil {
			return nil, err
		}
		return overVJPOp(o, in[0], in[1], in[2], opcore.OutAt(out, 0), opcore.OutAt(out, 1))
	})
	opcore.DefVJP("soft_raster", rasterVJP)
	opcore.DefVJP("over", func(b *opcore.GradBuilder) []*tensor.Tensor {
		return b.CallN("over_vjp", opcore.Attrs{}, 2, b.Cot(0), b.In(0), b.In(1))
	})
	opcore.DefNoGrad("a VJP's kernel: gradients of gradients are not supported", "soft_raster_vjp", "over_vjp")
}

// rasterVJP is soft_raster's VJP: its kernel recomputes the layer's
// coverage from tri and rgba (nothing of the forward is saved).
func rasterVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	if !b.Wants(0) && !b.Wants(1) {
		return []*tensor.Tensor{nil, nil}
	}
	return b.CallN("soft_raster_vjp", b.Attrs(), 2, b.In(0), b.In(1), b.Cot(0))
}

// layerSpec is a checked soft_raster call.
type layerSpec struct {
	dt           tensor.Dtype
	n            int // triangles in tri
	h, w         int
	sigma        float64
	start, count int
}

// checkLayer checks soft_raster's (and its VJP's) inputs and attributes.
func checkLayer(op *opcore.Op, tri, rgba *tensor.Tensor, at opcore.Attrs) (layerSpec, error) {
	var s layerSpec
	s.dt = tri.Dtype()
	if s.dt != tensor.Float32 && s.dt != tensor.Float64 {
		return s, op.Unsupported(s.dt, "float32, float64")
	}
	if rgba.Dtype() != s.dt {
		return s, op.Errorf("tri is %v and rgba %v: want one dtype", s.dt, rgba.Dtype())
	}
	ts, cs := tri.Shape(), rgba.Shape()
	if len(ts) != 3 || ts[1] != 3 || ts[2] != 2 {
		return s, op.Errorf("tri has shape %v: want [N, 3, 2] (N triangles' vertices, x and y in pixels)", ts)
	}
	if len(cs) != 2 || cs[0] != ts[0] || cs[1] != 4 {
		return s, op.Errorf("rgba has shape %v: want [%d, 4] (straight colour and opacity per triangle)", cs, ts[0])
	}
	s.n = ts[0]
	if len(at.Shape) != 2 || at.Shape[0] < 1 || at.Shape[1] < 1 {
		return s, op.Errorf("shape is %v: want [H, W], both at least 1", at.Shape)
	}
	s.h, s.w = at.Shape[0], at.Shape[1]
	if uint64(s.h)*uint64(s.w)*4 >= 1<<32 || uint64(s.n)*6 >= 1<<32 {
		return s, op.Errorf("an image of %dx%d and %d triangles exceed 2^32 values", s.h, s.w, s.n)
	}
	s.sigma = 1
	if at.Sigma != nil {
		s.sigma = *at.Sigma
	}
	if !(s.sigma > 0) || math.IsInf(s.sigma, 0) {
		return s, op.Errorf("sigma is %v: want a finite width > 0, in pixels", s.sigma)
	}
	if s.dt == tensor.Float32 && float32(s.sigma) == 0 {
		return s, op.Errorf("sigma %v is 0 in float32", s.sigma)
	}
	s.start, s.count = at.Start, at.Count
	if s.count == 0 {
		s.count = s.n - s.start
	}
	if s.start < 0 || s.count < 0 || s.start+s.count > s.n {
		return s, op.Errorf("start %d and count %d: want 0 <= start, 0 <= count, start + count <= %d", at.Start, at.Count, s.n)
	}
	return s, op.RequireDtypes(s.dt)
}

// sigmaPush is sigma as the kernels' push constant.
func (s layerSpec) sigmaPush() any {
	if s.dt == tensor.Float64 {
		return s.sigma
	}
	return float32(s.sigma)
}

func rasterOp(o opcore.Owner, tri, rgba *tensor.Tensor, at opcore.Attrs, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "soft_raster", tri, rgba)
	if err != nil {
		return nil, err
	}
	s, err := checkLayer(op, tri, rgba, at)
	if err != nil {
		return op.Fail(err)
	}
	layer, err := op.OutputNoAlias(out, s.dt, []int{s.h, s.w, 4})
	if err != nil {
		return op.Fail(err)
	}
	px := uint64(s.h) * uint64(s.w)
	pix := uint64(1)
	if op.Device().Info.Type == vk.DeviceTypeCPU {
		pix = cpuPixels
	}
	nt := (px + pix - 1) / pix
	groups, err := op.Grid(nt, localSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.Dispatch(rasterSource(s.dt, s.count), []*tensor.Tensor{tri, rgba, layer}, groups,
		s.sigmaPush(), uint32(s.w), uint32(s.h), uint32(s.start), uint32(s.count), uint32(nt)))
}

func rasterVJPOp(o opcore.Owner, tri, rgba, g *tensor.Tensor, at opcore.Attrs, gtriOut, grgbaOut *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "soft_raster_vjp", tri, rgba, g)
	if err != nil {
		return nil, err
	}
	s, err := checkLayer(op, tri, rgba, at)
	if err != nil {
		return op.Fail(err)
	}
	if g.Dtype() != s.dt || !slices.Equal(g.Shape(), []int{s.h, s.w, 4}) {
		return op.Fail(op.Errorf("g is %v %v: want %v [%d, %d, 4], the layer's", g.Dtype(), g.Shape(), s.dt, s.h, s.w))
	}
	gtri, err := op.OutputNoAlias(gtriOut, s.dt, []int{s.n, 3, 2})
	if err != nil {
		return op.Fail(err)
	}
	grgba, err := op.OutputNoAlias(grgbaOut, s.dt, []int{s.n, 4})
	if err != nil {
		return op.Fail(err)
	}
	if s.n == 0 {
		return op, nil
	}
	px := uint64(s.h) * uint64(s.w)
	nt := min(px, backwardThreads)
	count := s.count
	part := g // unread when count is 0
	if count > 0 {
		if nt*uint64(count)*10 >= 1<<32 {
			return op.Fail(op.Errorf("%d sums of %d triangles exceed 2^32 values", nt, count))
		}
		if part, err = op.Temp(s.dt, []int{int(nt) * count * 10}); err != nil {
			return op.Fail(err)
		}
		grid, err := op.Grid(nt, localSize)
		if err != nil {
			return op.Fail(err)
		}
		if err := op.Dispatch(rasterBackwardSource(s.dt, count), []*tensor.Tensor{tri, rgba, g, part}, grid,
			s.sigmaPush(), uint32(s.w), uint32(s.h), uint32(s.start), uint32(nt)); err != nil {
			return op.Fail(err)
		}
	}
	grid, err := op.Grid(uint64(s.n)*10, localSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.Dispatch(rasterReduceSource(s.dt), []*tensor.Tensor{part, gtri, grgba}, grid,
		uint32(s.n), uint32(s.start), uint32(count), uint32(nt)))
}

// checkImages checks that ts are float32 or float64 RGBA images of one
// dtype and shape ([..., 4]).
func checkImages(op *opcore.Op, names []string, ts ...*tensor.Tensor) (tensor.Dtype, []int, error) {
	dt, shape := ts[0].Dtype(), ts[0].Shape()
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return dt, nil, op.Unsupported(dt, "float32, float64")
	}
	if len(shape) == 0 || shape[len(shape)-1] != 4 {
		return dt, nil, op.Errorf("%s has shape %v: want [..., 4] (premultiplied RGBA)", names[0], shape)
	}
	for i, t := range ts[1:] {
		if t.Dtype() != dt || !slices.Equal(t.Shape(), shape) {
			return dt, nil, op.Errorf("%s is %v %v and %s %v %v: want one dtype and shape",
				names[0], dt, shape, names[i+1], t.Dtype(), t.Shape())
		}
	}
	if uint64(ts[0].Len()) >= 1<<32 {
		return dt, nil, op.Errorf("%d values exceed 2^32", ts[0].Len())
	}
	return dt, shape, op.RequireDtypes(dt)
}

func overOp(o opcore.Owner, src, dst, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "over", src, dst)
	if err != nil {
		return nil, err
	}
	dt, shape, err := checkImages(op, []string{"src", "dst"}, src, dst)
	if err != nil {
		return op.Fail(err)
	}
	// out may be dst or src (in place: each invocation reads its pixel
	// before it writes it).
	y, err := op.Output(out, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	px := uint64(src.Len() / 4)
	if px == 0 {
		return op, nil
	}
	groups, err := op.Grid(px, localSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.Dispatch(overSource(dt), []*tensor.Tensor{src, dst, y}, groups, uint32(px)))
}

func overVJPOp(o opcore.Owner, g, src, dst, gsrcOut, gdstOut *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "over_vjp", g, src, dst)
	if err != nil {
		return nil, err
	}
	dt, shape, err := checkImages(op, []string{"g", "src", "dst"}, g, src, dst)
	if err != nil {
		return op.Fail(err)
	}
	gs, err := op.OutputNoAlias(gsrcOut, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	gd, err := op.OutputNoAlias(gdstOut, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	px := uint64(g.Len() / 4)
	if px == 0 {
		return op, nil
	}
	groups, err := op.Grid(px, localSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.Dispatch(overBackwardSource(dt), []*tensor.Tensor{g, src, dst, gs, gd}, groups, uint32(px)))
}

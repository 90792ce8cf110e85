package render_test

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/render"
	"github.com/vkflow/vkflow/tensor"
)

// A soft render recorded on a tape and differentiated: two triangles into
// a 4x4 image, layers rasterized on queue 0 and blended on queue 1; the
// backward graph gives the gradient of the image's total opacity with
// respect to each triangle's colour and opacity.
func ExampleSoftRender() {
	mgr, err := vkflow.New(vkflow.WithQueues(2, false))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mgr.Close()
	ctx := context.Background()
	tri, _ := tensor.FromSlice(mgr, []float32{
		0, 0, 8, 0, 0, 8, // covers the image
		1, 1, 3, 1, 1, 3, // a small one on top
	}, 2, 3, 2)
	rgba, _ := tensor.FromSlice(mgr, []float32{1, 0, 0, 0.5, 0, 0, 1, 1}, 2, 4)
	// The cotangent: d(total opacity)/d(image) is 1 on the alpha channel.
	w := make([]float32, 4*4*4)
	for i := 3; i < len(w); i += 4 {
		w[i] = 1
	}
	dy, _ := tensor.FromSlice(mgr, w, 4, 4, 4)

	g, _ := graph.New(mgr)
	tp, _ := ops.NewTape(mgr, g)
	defer tp.Close()
	img, err := render.SoftRender(tp, tri, rgba, render.Options{Height: 4, Width: 4, Sigma: 0.25, Batch: 1, RasterQueue: 0, BlendQueue: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	g.Input(tri, rgba)
	bw, err := tp.Grad([]*tensor.Tensor{img}, []*tensor.Tensor{dy}, []*tensor.Tensor{tri, rgba})
	if err != nil {
		fmt.Println(err)
		return
	}
	fwd, _ := g.Compile(graph.Queues(0, 1))
	defer fwd.Close()
	bwd, _ := bw.Graph.Compile(graph.Queues(0, 1))
	defer bwd.Close()
	if err := fwd.Run(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := bwd.Run(ctx); err != nil {
		fmt.Println(err)
		return
	}
	_ = bw.Grads[1].Wait(ctx)
	px, _ := img.Float32s()
	grgba, _ := bw.Grads[1].Float32s()
	fmt.Printf("pixel (1, 1): %.3f\n", px[(1*4+1)*4:][:4])
	fmt.Printf("d opacity / d rgba: %.3f\n", grgba)
	// Output:
	// pixel (1, 1): [0.059 0.000 0.881 0.940]
	// d opacity / d rgba: [0.000 0.000 0.000 12.472 0.000 0.000 0.000 1.391]
}

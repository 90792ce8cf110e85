package ops_test

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// The VJP of one op, queued on a stream: d/dx of sum(g · x²) is 2x·g.
func ExampleStream_VJP() {
	mgr, err := vkflow.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mgr.Close()
	s, _ := ops.DefaultStream(mgr)
	x, _ := tensor.FromSlice(mgr, []float32{1, 2, 3})
	g, _ := tensor.FromSlice(mgr, []float32{1, 1, 0.5})
	grads, err := s.VJP("square", []*tensor.Tensor{x}, nil, []*tensor.Tensor{g}, ops.Attrs{}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer grads[0].Close()
	_ = grads[0].Wait(context.Background())
	v, _ := grads[0].Float32s()
	fmt.Println(v)
	_, err = s.VJP("less", []*tensor.Tensor{x, x}, nil, []*tensor.Tensor{g}, ops.Attrs{}, nil)
	fmt.Println(err != nil)
	// Output:
	// [2 4 3]
	// true
}

// A graph recorded through a Tape, differentiated into a backward graph:
// y = sum(x·w), so dy/dw = xᵀ·1.
func ExampleTape_Grad() {
	mgr, err := vkflow.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mgr.Close()
	ctx := context.Background()
	x, _ := tensor.FromSlice(mgr, []float32{1, 2, 3, 4}, 2, 2)
	w, _ := tensor.FromSlice(mgr, []float32{1, 0, 0, 1}, 2, 2)
	one, _ := tensor.New(mgr, tensor.Float32, []int{})
	_ = tensor.Write(one, []float32{1})

	g, _ := graph.New(mgr)
	tp, _ := ops.NewTape(mgr, g)
	defer tp.Close()
	xw, _ := tp.Call1("matmul", ops.Attrs{}, x, w)
	y, _ := tp.Call1("sum", ops.Attrs{}, xw)
	g.Input(x, w)
	bw, err := tp.Grad([]*tensor.Tensor{y}, []*tensor.Tensor{one}, []*tensor.Tensor{w})
	if err != nil {
		fmt.Println(err)
		return
	}
	fwd, _ := g.Compile()
	defer fwd.Close()
	bwd, _ := bw.Graph.Compile()
	defer bwd.Close()
	_ = fwd.Run(ctx)
	_ = bwd.Run(ctx)
	v, _ := bw.Grads[0].Float32s()
	fmt.Println(v, "saved bytes:", bw.SavedBytes)
	// Output:
	// [4 4 6 6] saved bytes: 16
}

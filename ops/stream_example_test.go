package ops_test

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// Eager calls on the Manager's default stream: each returns once it is
// submitted, the GPU orders the chain, and the host waits once, to read.
func ExampleStream() {
	mgr, err := vkflow.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mgr.Close()
	s, err := ops.DefaultStream(mgr)
	if err != nil {
		fmt.Println(err)
		return
	}
	x, _ := tensor.FromSlice(mgr, []float32{1, 2, 3})
	for i := 0; i < 3; i++ { // x = x * x, three times, no host wait
		outs, err := s.Call("mul", []*tensor.Tensor{x, x}, nil, ops.Attrs{})
		if err != nil {
			fmt.Println(err)
			return
		}
		x.Close() // safe: freed once the queued call has read it
		x = outs[0]
	}
	if err := x.Wait(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	v, _ := x.Float32s()
	fmt.Println(v)
	// Output: [1 256 6561]
}

package graph_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/tensor"
)

// The example opens a Manager with plain vkflow.New(), as a user's program
// does, so it runs without the validation layer; the same graphs run under
// validation in this package's tests.

// A diamond: b and c both read a, d reads both. The graph infers the three
// edges. Placement by cost (the default) weighs the branches' work against
// a hand-off between queues: with an H200's figures (injected here, so that
// the output is the same on every device; Compile measures the device's
// own), 65,536 invocations a branch do not pay for a 180 µs hand-off, and
// the whole diamond is one command buffer on queue 0. PlaceSpread puts the
// branches on different queues whatever the cost: the upload ends its
// command buffer, so that c waits for it alone, the join follows the later
// branch on its queue, and a run's upload and b wait for the previous
// run's reads of a and b on the other queue. The schedule prints with
// String; runs replay it.
func ExampleGraph_Compile() {
	mgr, err := vkflow.New(vkflow.WithQueues(2, false))
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close()

	const n = 1 << 16
	a, err := tensor.FromSlice(mgr, make([]float32, n))
	if err != nil {
		log.Fatal(err)
	}
	b, _ := tensor.New(mgr, tensor.Float32, []int{n})
	c, _ := tensor.New(mgr, tensor.Float32, []int{n})
	d, _ := tensor.New(mgr, tensor.Float32, []int{n})
	double, _ := kernels.Add(mgr, a, a, b)
	square, _ := kernels.Multiply(mgr, a, a, c)
	sum, _ := kernels.Add(mgr, b, c, d)

	in := make([]float32, n)
	out := make([]float32, n)
	g, err := graph.New(mgr)
	if err != nil {
		log.Fatal(err)
	}
	g.Upload(a, in).Named("upload a")
	g.Dispatch(double).Named("b = a+a")
	g.Dispatch(square).Named("c = a*a")
	g.Dispatch(sum).Named("d = b+c")
	g.Download(d, out).Named("download d")
	h200 := graph.Costs{SubmitNs: 17e3, HandoffNs: 180e3, ByteNs: 0.0005}
	exec, err := g.Compile(graph.WithCosts(h200))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(exec)
	spread, err := g.Compile(graph.Place(graph.PlaceSpread))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(spread)
	spread.Close()

	for _, v := range []float32{3, 5} {
		for i := range in {
			in[i] = v
		}
		if err := exec.Run(context.Background()); err != nil {
			log.Fatal(err)
		}
		fmt.Println("d =", out[0])
	}
	// Output:
	// graph: 5 nodes, 5 edges, 1 submits on queues [0 1]
	// placement: by cost, hand-off 17µs on one queue, 180µs between queues, 0.002 ns per invocation (injected); estimated work: queue 0 401ns, queue 1 0ns
	// submit 0: queue 0 #0
	//   0 upload a
	//   barrier t0(float32[65536])[0:262144]
	//   1 b = a+a, 2 c = a*a
	//   barrier t1(float32[65536])[0:262144] t2(float32[65536])[0:262144]
	//   3 d = b+c
	//   barrier t3(float32[65536])[0:262144]
	//   4 download d
	// graph: 5 nodes, 5 edges, 4 submits on queues [0 1]
	// placement: spread; estimated work: queue 0 90112 inv, queue 1 110592 inv
	// submit 0: queue 0 #0, waits the previous run's queue 1 #0
	//   0 upload a
	// submit 1: queue 0 #1, waits the previous run's queue 1 #1
	//   1 b = a+a
	// submit 2: queue 1 #0, waits queue 0 #0
	//   2 c = a*a
	// submit 3: queue 1 #1, waits queue 0 #1
	//   3 d = b+c
	//   barrier t3(float32[65536])[0:262144]
	//   4 download d
	// d = 15
	// d = 35
}

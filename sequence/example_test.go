package sequence_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// The examples open a Manager with plain vkflow.New(), as a user's program
// does, so they run without the validation layer: an example has no
// *testing.T for testutil.Manager to fail. The same operations run under
// validation in this package's tests.

// EvalAsync submits and returns at once; the host is free until it waits on
// the Pending, with a context that bounds the wait.
func ExampleSequence_EvalAsync() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close()

	x, err := tensor.FromSlice(mgr, []float32{1, 2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	y, err := tensor.FromSlice(mgr, []float32{1, 1, 1, 1})
	if err != nil {
		log.Fatal(err)
	}
	saxpy, err := kernels.Saxpy(mgr, x, y)
	if err != nil {
		log.Fatal(err)
	}
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		log.Fatal(err)
	}
	seq.Dispatch(saxpy, float32(3)).SyncLocal(y)

	p := seq.EvalAsync()
	// ... other host work here ...
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// On timeout Wait returns ctx.Err() and frees nothing the GPU may use.
	if err := p.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	got, err := y.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Done(), got)

	// A submitted sequence can be submitted again as it is.
	if err := seq.EvalAsync().Wait(ctx); err != nil {
		log.Fatal(err)
	}
	got, err = y.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got)
	// Output:
	// true [4 7 10 13]
	// [7 13 19 25]
}

// With WithTimestamps a sequence measures the GPU time of each operation.
func ExampleSequence_Timestamps() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close()

	a, err := tensor.FromSlice(mgr, []float32{1, 2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	out, err := tensor.New(mgr, tensor.Float32, []int{4})
	if err != nil {
		log.Fatal(err)
	}
	mul, err := kernels.Multiply(mgr, a, a, out)
	if err != nil {
		log.Fatal(err)
	}
	seq, err := sequence.New(mgr, 0, sequence.WithTimestamps())
	if err != nil {
		log.Fatal(err)
	}
	err = seq.SyncDevice(a).Dispatch(mul).Copy(out, a).SyncLocal(a).Eval(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	ts, err := seq.Timestamps()
	if err != nil {
		log.Fatal(err)
	}
	// One duration per operation, in recording order; their values vary.
	fmt.Println(len(ts), "durations")
	// Output: 4 durations
}

package kernels_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/kernels"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// A program written against the old package builds and runs unchanged:
// out = a*b, then out = 2*a + out, in one sequence. The example opens its
// Manager with plain vkflow.New(), as a user's program does.
func Example() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close() // closes everything created from mgr

	a, err := tensor.FromSlice(mgr, []float32{1, 2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	b, err := tensor.FromSlice(mgr, []float32{10, 20, 30, 40})
	if err != nil {
		log.Fatal(err)
	}
	out, err := tensor.New(mgr, tensor.Float32, []int{4})
	if err != nil {
		log.Fatal(err)
	}
	mul, err := kernels.Multiply(mgr, a, b, out)
	if err != nil {
		log.Fatal(err)
	}
	saxpy, err := kernels.Saxpy(mgr, a, out) // out = alpha*a + out
	if err != nil {
		log.Fatal(err)
	}
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		log.Fatal(err)
	}
	err = seq.SyncDevice(a, b).Dispatch(mul).Dispatch(saxpy, float32(2)).SyncLocal(out).Eval(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	got, err := out.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got)
	// Output: [12 44 96 168]
}

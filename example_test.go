package vkflow_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// The examples open a Manager with plain vkflow.New(), as a user's program
// does, so they run without the validation layer: an example has no
// *testing.T for testutil.Manager to fail. The same operations run under
// validation in this package's tests.

// Open the default device, multiply two tensors elementwise and read the
// result back.
func ExampleNew() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close() // closes everything created from mgr

	a, err := tensor.FromSlice(mgr, []float32{2, 4, 6})
	if err != nil {
		log.Fatal(err)
	}
	b, err := tensor.FromSlice(mgr, []float32{0, 1, 2})
	if err != nil {
		log.Fatal(err)
	}
	out, err := tensor.New(mgr, tensor.Float32, []int{3})
	if err != nil {
		log.Fatal(err)
	}
	mul, err := kernels.Multiply(mgr, a, b, out)
	if err != nil {
		log.Fatal(err)
	}
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		log.Fatal(err)
	}
	err = seq.SyncDevice(a, b).Dispatch(mul).SyncLocal(out).Eval(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	got, err := out.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got)
	// Output: [0 4 12]
}

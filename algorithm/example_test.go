package algorithm_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
)

// The examples open a Manager with plain vkflow.New(), as a user's program
// does, so they run without the validation layer: an example has no
// *testing.T for testutil.Manager to fail. The same operations run under
// validation in this package's tests.

// Build an algorithm from SPIR-V (saxpy: y = alpha*x + y) and dispatch it
// with its push constant, given as a typed Go value.
func ExampleNew() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close()

	x, err := tensor.FromSlice(mgr, []float32{1, 2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	y, err := tensor.FromSlice(mgr, []float32{10, 20, 30, 40})
	if err != nil {
		log.Fatal(err)
	}
	// New reflects the shader and checks the two bindings against it.
	saxpy, err := algorithm.New(mgr, shaders.Saxpy, []*tensor.Tensor{x, y})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("local size", saxpy.LocalSize(), "push bytes", saxpy.PushSize(), "workgroups", saxpy.Workgroups())
	fmt.Println("access", saxpy.Access(0), saxpy.Access(1))

	seq, err := sequence.New(mgr, 0)
	if err != nil {
		log.Fatal(err)
	}
	alpha := float32(2)
	if err := seq.Dispatch(saxpy, alpha).SyncLocal(y).Eval(context.Background()); err != nil {
		log.Fatal(err)
	}
	got, err := y.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got)
	// Output:
	// local size [64 1 1] push bytes 4 workgroups [1 1 1]
	// access ReadOnly ReadWrite
	// [12 24 36 48]
}

// Bind points an algorithm at new tensors without rebuilding its pipeline.
// A recorded sequence keeps the bindings it recorded until Rerecord.
func ExampleAlgorithm_Bind() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close()
	ctx := context.Background()
	newTensor := func(v ...float32) *tensor.Tensor {
		t, err := tensor.FromSlice(mgr, v)
		if err != nil {
			log.Fatal(err)
		}
		return t
	}
	x1, y1 := newTensor(1, 1, 1), newTensor(0, 0, 0)
	x2, y2 := newTensor(1, 2, 3), newTensor(100, 100, 100)
	show := func() {
		v1, err := y1.Float32s()
		if err != nil {
			log.Fatal(err)
		}
		v2, err := y2.Float32s()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("y1", v1, "y2", v2)
	}

	saxpy, err := algorithm.New(mgr, shaders.Saxpy, []*tensor.Tensor{x1, y1})
	if err != nil {
		log.Fatal(err)
	}
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		log.Fatal(err)
	}
	if err := seq.Dispatch(saxpy, float32(10)).SyncLocal(y1, y2).Eval(ctx); err != nil {
		log.Fatal(err)
	}
	show()

	// Re-bind to (x2, y2). The recorded sequence, submitted again, still
	// uses (x1, y1).
	if err := saxpy.Bind(x2, y2); err != nil {
		log.Fatal(err)
	}
	if err := seq.Eval(ctx); err != nil {
		log.Fatal(err)
	}
	show()

	// Rerecord picks up the new bindings at the next submit.
	if err := seq.Rerecord(); err != nil {
		log.Fatal(err)
	}
	if err := seq.Eval(ctx); err != nil {
		log.Fatal(err)
	}
	show()
	// Output:
	// y1 [10 10 10] y2 [100 100 100]
	// y1 [20 20 20] y2 [100 100 100]
	// y1 [20 20 20] y2 [110 120 130]
}

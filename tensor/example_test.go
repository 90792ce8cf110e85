package tensor_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/tensor"
)

// The examples open a Manager with plain vkflow.New(), as a user's program
// does, so they run without the validation layer: an example has no
// *testing.T for testutil.Manager to fail. The same operations run under
// validation in this package's tests.

// FromSlice copies a Go slice into a new Device tensor; the shape defaults
// to the slice's length, or is given explicitly.
func ExampleFromSlice() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close()

	t, err := tensor.FromSlice(mgr, []int32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		log.Fatal(err)
	}
	v, err := t.Int32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t)
	fmt.Println(t.Shape(), t.Dtype(), t.Len(), t.Bytes())
	fmt.Println(v)

	// A shape whose product differs from the data's length is an error.
	_, err = tensor.FromSlice(mgr, []int32{1, 2, 3}, 2, 2)
	fmt.Println(errors.Is(err, vkflow.ErrInvalid))
	// Output:
	// Tensor(int32[2 3], Device)
	// [2 3] int32 6 24
	// [1 2 3 4 5 6]
	// true
}

// Write copies host data into an existing tensor, here one in host-visible
// memory; the element type must match the tensor's dtype.
func ExampleWrite() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close()

	t, err := tensor.New(mgr, tensor.Float32, []int{4}, tensor.In(tensor.Host))
	if err != nil {
		log.Fatal(err)
	}
	before, err := t.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(before) // New tensors are zero-filled.

	if err := tensor.Write(t, []float32{1.5, 2.5, 3.5, 4.5}); err != nil {
		log.Fatal(err)
	}
	after, err := t.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(after)

	// The wrong element type is an error.
	err = tensor.Write(t, []int32{1, 2, 3, 4})
	fmt.Println(errors.Is(err, vkflow.ErrInvalid))
	// Output:
	// [0 0 0 0]
	// [1.5 2.5 3.5 4.5]
	// true
}

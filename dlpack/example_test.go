package dlpack_test

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/tensor"
)

// The examples open a Manager with plain vkflow.New(), as a user's program
// does, so they run without the validation layer: an example has no
// *testing.T for testutil.Manager to fail. The same operations run under
// validation in this package's tests.

// A tensor goes out as a legacy DLManagedTensor, the way NumPy 1.24 and
// PyTorch 1.13 take it, and comes back in.
func Example() {
	m, err := vkflow.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	t, err := tensor.FromSlice(m, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()

	// On a device whose memory the host can map, the export is zero-copy
	// kDLCPU memory; it waits for pending GPU writes before returning.
	mt, err := dlpack.Export(context.Background(), t, dlpack.Options{Device: &dlpack.Device{Type: dlpack.CPU}})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := mt.Describe()
	fmt.Println(in.Device, in.DataType, in.Shape, in.Strides)
	fmt.Println(unsafe.Slice((*float32)(in.Data), 6))

	// Import takes the managed tensor over: the new tensor calls the
	// deleter when it is closed.
	back, copied, err := dlpack.Import(context.Background(), m, mt)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer back.Close()
	vals, _ := back.Float32s()
	fmt.Println(back.Shape(), vals[5], copied)
	// Output:
	// (kDLCPU, 0) {2 32 1} [2 3] [3 1]
	// [1 2 3 4 5 6]
	// [2 3] 6 false
}

package fft_test

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops/fft"
	"github.com/vkflow/vkflow/tensor"
)

// The real transform of a length-4 signal: its three non-negative
// frequencies.
func ExampleRFFT() {
	mgr, err := vkflow.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mgr.Close()
	x, _ := tensor.FromSlice(mgr, []float64{1, 2, 3, 4})
	op, err := fft.RFFT(mgr, x, 0, -1, "backward", nil) // n 0: x's length
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	if err := op.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	y, _ := op.Outputs()[0].Complex128s()
	fmt.Println(y)
	// Output: [(10+0i) (-2+2i) (-2+0i)]
}

package linalg_test

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops/linalg"
	"github.com/vkflow/vkflow/tensor"
)

// Solve a·x = b for one 2×2 system: prepare the op, run it, read x.
func ExampleSolve() {
	mgr, err := vkflow.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mgr.Close()
	a, _ := tensor.FromSlice(mgr, []float64{2, 1, 1, 3}, 2, 2)
	b, _ := tensor.FromSlice(mgr, []float64{3, 5})
	op, err := linalg.Solve(mgr, a, b, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	if err := op.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	x, _ := op.Outputs()[0].Float64s()
	fmt.Printf("%.3f\n", x)
	// Output: [0.800 1.400]
}

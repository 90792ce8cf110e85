package linalg_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

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

// The eigenvalues of a rotation by 90°, ±i, from a real matrix: eig's
// results are complex.
func ExampleEig() {
	mgr, err := vkflow.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mgr.Close()
	a, _ := tensor.FromSlice(mgr, []float64{0, -1, 1, 0}, 2, 2)
	op, err := linalg.Eig(mgr, a, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	if err := op.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	w, v := op.Outputs()[0], op.Outputs()[1]
	fmt.Println(w.Dtype(), w.Shape(), v.Shape())
	vals, _ := w.Complex128s()
	slices.SortFunc(vals, func(x, y complex128) int { return cmp.Compare(imag(x), imag(y)) })
	for _, z := range vals {
		fmt.Printf("%+.3fi (real part below 1e-12: %v)\n", imag(z), math.Abs(real(z)) < 1e-12)
	}
	// Output:
	// complex128 [2] [2 2]
	// -1.000i (real part below 1e-12: true)
	// +1.000i (real part below 1e-12: true)
}

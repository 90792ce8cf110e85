// Command multiply is Kompute's README example in vkflow: it multiplies two
// arrays elementwise on the GPU, prints the result and checks it.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "multiply:", err)
		os.Exit(1)
	}
}

func run() (err error) {
	mgr, err := vkflow.New()
	if err != nil {
		return err
	}
	// Closing the Manager closes everything created from it.
	defer func() {
		if cerr := mgr.Close(); err == nil {
			err = cerr
		}
	}()
	fmt.Println("device:", mgr.Device())

	av := []float32{2, 4, 6}
	bv := []float32{0, 1, 2}
	a, err := tensor.FromSlice(mgr, av)
	if err != nil {
		return err
	}
	b, err := tensor.FromSlice(mgr, bv)
	if err != nil {
		return err
	}
	out, err := tensor.New(mgr, tensor.Float32, []int{len(av)})
	if err != nil {
		return err
	}
	// ops.Mul prepares the operator (its pipeline, bound to a, b and out);
	// Record appends its dispatch to a sequence. mul.Run(ctx) would run it
	// on its own.
	mul, err := ops.Mul(mgr, a, b, out)
	if err != nil {
		return err
	}
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		return err
	}
	if err := mul.Record(seq.SyncDevice(a, b)).SyncLocal(out).Eval(context.Background()); err != nil {
		return err
	}

	got, err := out.Float32s()
	if err != nil {
		return err
	}
	fmt.Printf("%v * %v = %v\n", av, bv, got)
	for i := range av {
		if want := av[i] * bv[i]; got[i] != want {
			return fmt.Errorf("out[%d] = %v, want %v", i, got[i], want)
		}
	}
	fmt.Println("ok: matches a*b elementwise")
	return nil
}

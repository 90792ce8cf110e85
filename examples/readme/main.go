// Command readme is the complete program of the README, kept here so that
// it is built and run like every other example.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

func main() {
	mgr, err := vkflow.New() // the default device; VKFLOW_DEVICE overrides
	check(err)
	defer mgr.Close() // closes everything created from mgr

	x, err := tensor.FromSlice(mgr, []float32{1, 2, 3, 4})
	check(err)
	y, err := tensor.FromSlice(mgr, []float32{10, 20, 30, 40})
	check(err)
	alpha, err := tensor.FromSlice(mgr, []float32{2})
	check(err)
	// y = alpha*x + y in place: two operators, alpha broadcast over x.
	ax, err := ops.Mul(mgr, alpha, x, nil) // allocates its output, ax.Out()
	check(err)
	axpy, err := ops.Add(mgr, ax.Out(), y, y)
	check(err)
	seq, err := sequence.New(mgr, 0) // logical queue 0
	check(err)

	// Record once, submit twice; the sequence puts the barriers in.
	axpy.Record(ax.Record(seq.SyncDevice(x, y, alpha))).SyncLocal(y)
	ctx := context.Background()
	check(seq.Eval(ctx)) // submit and wait
	p := seq.EvalAsync() // submit, return at once
	check(p.Wait(ctx))   // wait on the queue's timeline semaphore
	out, err := y.Float32s()
	check(err)
	fmt.Println(mgr.Device().Name, out) // ... [14 28 42 56]
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

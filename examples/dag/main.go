// Command dag is the case of Kompute issue #238: three jobs A, B and C, where
// A and B are independent and C needs both, ordered on the GPU by timeline
// semaphores, with one host wait, for C.
//
// A (a = x*x) runs on logical queue 0 and B (b = x+x) on logical queue 1;
// C (c = a+b) waits for both. C is submitted first: vkflow holds it on the
// host until A and B are submitted, then releases it to the driver, so no
// order of submits can deadlock (lavapipe has a single queue, on which a
// wait that reaches the driver before its signal would hang).
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/kernels"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

func main() {
	mgr, err := vkflow.New(vkflow.WithQueues(2, false)) // two logical compute queues
	if err != nil {
		fmt.Fprintln(os.Stderr, "dag:", err)
		os.Exit(1)
	}
	xs := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	c, err := dag(mgr, xs)
	if cerr := mgr.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = check(xs, c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dag:", err)
		os.Exit(1)
	}
	fmt.Printf("c = x*x + (x+x) = %v\nok: matches the CPU\n", c)
}

// dag runs A, B and C on mgr (which needs two logical queues) and returns a
// copy of c.
func dag(mgr *vkflow.Manager, xs []float32) (c []float32, err error) {
	defer catch(&err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x := must(tensor.FromSlice(mgr, xs))
	a, b, ct := zeros(mgr, len(xs)), zeros(mgr, len(xs)), zeros(mgr, len(xs))
	ta, tb, tc := must(timeline.New(mgr, 0)), must(timeline.New(mgr, 0)), must(timeline.New(mgr, 0))

	// Record the three jobs: A and B on different queues, C reads c back.
	seqA := must(sequence.New(mgr, 0)).Dispatch(must(kernels.Multiply(mgr, x, x, a))) // a = x*x
	seqB := must(sequence.New(mgr, 1)).Dispatch(must(kernels.Add(mgr, x, x, b)))      // b = x+x
	seqC := must(sequence.New(mgr, 0)).Dispatch(must(kernels.Add(mgr, a, b, ct))).SyncLocal(ct)

	// C first: it waits on the GPU for A and B, and is held on the host
	// until both are submitted. Submit never blocks.
	pc := seqC.Submit(ctx, sequence.Wait(ta, 1), sequence.Wait(tb, 1), sequence.Signal(tc, 1))
	fmt.Println("C submitted first, held until A and B are submitted:", !pc.Done())
	pb := seqB.Submit(ctx, sequence.Signal(tb, 1))
	pa := seqA.Submit(ctx, sequence.Signal(ta, 1))

	for _, p := range []sequence.Pending{pa, pb, pc} {
		try(p.Err()) // a submit refused up front (a recording error, say)
	}

	// The one host wait: C's timeline reaching 1 implies A and B are done.
	try(tc.Wait(ctx, 1))
	// Float32s aliases the tensor's mapped memory, valid until Close: copy.
	return slices.Clone(must(ct.Float32s())), nil
}

// check compares c with x*x + (x+x) computed on the CPU (exact here).
func check(xs, c []float32) error {
	if len(c) != len(xs) {
		return fmt.Errorf("got %d values, want %d", len(c), len(xs))
	}
	for i, x := range xs {
		if want := x*x + (x + x); c[i] != want {
			return fmt.Errorf("c[%d] = %v, want %v", i, c[i], want)
		}
	}
	return nil
}

func zeros(mgr *vkflow.Manager, n int) *tensor.Tensor {
	return must(tensor.New(mgr, tensor.Float32, []int{n}))
}

// failure carries an error from must or try to catch, keeping the example's
// steps free of error plumbing; other panics pass through.
type failure struct{ err error }

func must[T any](v T, err error) T {
	if err != nil {
		panic(failure{err})
	}
	return v
}

func try(err error) { must(struct{}{}, err) }

func catch(err *error) {
	if r := recover(); r != nil {
		f, ok := r.(failure)
		if !ok {
			panic(r)
		}
		*err = f.err
	}
}

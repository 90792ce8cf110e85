// Command dag is the case of Kompute issue #238: three jobs A, B and C, where
// A and B are independent and C needs both, run as a graph whose edges are
// inferred from what each job reads and writes.
//
// A (a = x*x) is pinned to logical queue 0 and B (b = x+x) to logical queue
// 1; C (c = a+b) reads both, so the graph orders it after A and B, on
// whichever queue Compile picks, with one timeline wait on the GPU for the
// job on the other queue and a barrier for the one on its own. No timeline
// value is picked by hand: the program prints the schedule Compile derived,
// then replays it.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

func main() {
	mgr, err := vkflow.New(vkflow.WithQueues(2, false)) // two logical compute queues
	if err != nil {
		fmt.Fprintln(os.Stderr, "dag:", err)
		os.Exit(1)
	}
	xs := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	c, schedule, err := dag(mgr, xs)
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
	fmt.Print(schedule)
	fmt.Printf("c = x*x + (x+x) = %v\nok: matches the CPU\n", c)
}

// dag runs A, B and C on mgr (which needs two logical queues) and returns c
// and the schedule.
func dag(mgr *vkflow.Manager, xs []float32) (c []float32, schedule string, err error) {
	defer catch(&err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x := must(tensor.FromSlice(mgr, xs))
	a, b, ct := zeros(mgr, len(xs)), zeros(mgr, len(xs)), zeros(mgr, len(xs))

	// Record the jobs in program order; the graph works out that C needs A
	// and B (it reads what they write) and that A and B need nothing.
	g := must(graph.New(mgr))
	g.Input(x) // the host wrote x: no node needs to
	must(ops.Mul(mgr, x, x, a)).AddTo(g).Named("A: a=x*x").OnQueue(0)
	must(ops.Add(mgr, x, x, b)).AddTo(g).Named("B: b=x+x").OnQueue(1)
	must(ops.Add(mgr, a, b, ct)).AddTo(g).Named("C: c=a+b")
	c = make([]float32, len(xs))
	g.Download(ct, c).Named("read c")

	exec := must(g.Compile())
	defer func() {
		if cerr := exec.Close(); err == nil {
			err = cerr
		}
	}()
	// Run replays the recorded command buffers and waits for the last one;
	// the download has filled c by the time it returns.
	try(exec.Run(ctx))
	return c, exec.String(), nil
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

// Command logreg trains a logistic regression on the GPU and checks it
// against the same computation on the CPU. It is `make demo`.
//
// The data are m = 256 points with d = 2 features, drawn with a fixed seed
// and labelled by the rule 1.5*x0 - 2*x1 + 0.5 + noise > 0. Training is
// full-batch gradient descent from zero weights: 300 steps of
// ops.LogRegStep (two dispatches each: partial sums per workgroup, then
// their total and the update) recorded into one sequence and evaluated
// once. Every step reads and rewrites w and b; the barriers the sequence
// infers between the dispatches order those read-modify-writes.
//
// The CPU repeats the same steps in float64 with the formulas of
// ops.LogRegStep (mean gradient, loss under the weights before the
// step, p clamped to [1e-7, 1-1e-7] inside the logarithm only). The two
// must agree to within 1e-3, the slack float32 accumulation needs.
package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

const (
	m         = 256  // samples
	d         = 2    // features
	steps     = 300  // gradient-descent steps
	lr        = 0.5  // learning rate
	tolerance = 1e-3 // largest accepted |GPU - CPU|
)

// The rule that labels the data (before noise).
var (
	trueW = [d]float64{1.5, -2}
	trueB = 0.5
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "logreg:", err)
		os.Exit(1)
	}
}

// dataset returns x (m×d, row-major) and labels y, deterministically.
func dataset() (x, y []float32) {
	rng := rand.New(rand.NewPCG(2024, 7))
	x = make([]float32, m*d)
	y = make([]float32, m)
	for i := range m {
		z := trueB + rng.NormFloat64()*0.5 // label noise
		for k := range d {
			v := float32(rng.NormFloat64() * 1.5)
			x[i*d+k] = v
			z += trueW[k] * float64(v)
		}
		if z > 0 {
			y[i] = 1
		}
	}
	return x, y
}

// model is a trained logistic regression and the loss of its last step.
type model struct {
	w    [d]float64
	b    float64
	loss float64 // mean cross-entropy under the weights before the last step
}

// trainCPU runs the shader's algorithm in float64.
func trainCPU(x, y []float32) model {
	var mo model
	for range steps {
		var gw [d]float64
		var gb, l float64
		for i := range m {
			z := mo.b
			for k := range d {
				z += mo.w[k] * float64(x[i*d+k])
			}
			p := 1 / (1 + math.Exp(-z))
			diff := p - float64(y[i])
			for k := range d {
				gw[k] += diff * float64(x[i*d+k])
			}
			gb += diff
			pl := min(max(p, 1e-7), 1-1e-7)
			l -= float64(y[i])*math.Log(pl) + (1-float64(y[i]))*math.Log(1-pl)
		}
		for k := range d {
			mo.w[k] -= lr * gw[k] / m
		}
		mo.b -= lr * gb / m
		mo.loss = l / m
	}
	return mo
}

// accuracy is the fraction of samples the model (w, b) labels correctly.
func accuracy(x, y []float32, w [d]float64, b float64) float64 {
	right := 0
	for i := range m {
		z := b
		for k := range d {
			z += w[k] * float64(x[i*d+k])
		}
		if (z > 0) == (y[i] == 1) {
			right++
		}
	}
	return float64(right) / m
}

// trainGPU records every step into one sequence and evaluates it once.
func trainGPU(mgr *vkflow.Manager, xv, yv []float32) (model, time.Duration, error) {
	var mo model
	x, err := tensor.FromSlice(mgr, xv, m, d)
	if err != nil {
		return mo, 0, err
	}
	y, err := tensor.FromSlice(mgr, yv)
	if err != nil {
		return mo, 0, err
	}
	w, err := tensor.New(mgr, tensor.Float32, []int{d}) // zeros
	if err != nil {
		return mo, 0, err
	}
	b, err := tensor.New(mgr, tensor.Float32, []int{1})
	if err != nil {
		return mo, 0, err
	}
	loss, err := tensor.New(mgr, tensor.Float32, []int{1})
	if err != nil {
		return mo, 0, err
	}
	step, err := ops.LogRegStep(mgr, x, y, w, b, loss)
	if err != nil {
		return mo, 0, err
	}
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		return mo, 0, err
	}
	defer step.Close()
	seq.SyncDevice(x, y, w, b)
	for range steps {
		step.Record(seq, lr)
	}
	seq.SyncLocal(w, b, loss)

	start := time.Now()
	if err := seq.Eval(context.Background()); err != nil {
		return mo, 0, err
	}
	elapsed := time.Since(start)

	wv, err := w.Float32s()
	if err != nil {
		return mo, 0, err
	}
	bv, err := b.Float32s()
	if err != nil {
		return mo, 0, err
	}
	lv, err := loss.Float32s()
	if err != nil {
		return mo, 0, err
	}
	for k := range d {
		mo.w[k] = float64(wv[k])
	}
	mo.b, mo.loss = float64(bv[0]), float64(lv[0])
	return mo, elapsed, nil
}

func run() (err error) {
	mgr, err := vkflow.New()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := mgr.Close(); err == nil {
			err = cerr
		}
	}()

	x, y := dataset()
	positive := 0
	for _, v := range y {
		positive += int(v)
	}
	fmt.Printf("device    %s\n", mgr.Device())
	fmt.Printf("data      %d samples x %d features, labelled by %g*x0 %+g*x1 %+g + noise (%d positive)\n",
		m, d, trueW[0], trueW[1], trueB, positive)

	gpu, elapsed, err := trainGPU(mgr, x, y)
	if err != nil {
		return err
	}
	cpu := trainCPU(x, y)
	fmt.Printf("training  %d steps, lr %g, one sequence of %d dispatches, Eval (wall clock) %v\n\n",
		steps, lr, 2*steps, elapsed.Round(10*time.Microsecond))

	// loss is the mean cross-entropy entering the last step.
	fmt.Printf("%-12s %9s %9s %9s %9s %9s\n", "", "w0", "w1", "b", "loss", "accuracy")
	for _, r := range []struct {
		name string
		mo   model
	}{{"GPU float32", gpu}, {"CPU float64", cpu}} {
		fmt.Printf("%-12s %9.5f %9.5f %9.5f %9.5f %8.1f%%\n", r.name,
			r.mo.w[0], r.mo.w[1], r.mo.b, r.mo.loss, 100*accuracy(x, y, r.mo.w, r.mo.b))
	}

	diff := math.Max(math.Abs(gpu.b-cpu.b), math.Abs(gpu.loss-cpu.loss))
	for k := range d {
		diff = math.Max(diff, math.Abs(gpu.w[k]-cpu.w[k]))
	}
	fmt.Printf("\nmax |GPU - CPU| = %.2g (tolerance %g); the generating rule itself scores %.1f%%\n",
		diff, tolerance, 100*accuracy(x, y, trueW, trueB))
	if !(diff <= tolerance) { // also fails on NaN
		return fmt.Errorf("GPU and CPU differ by %g, more than %g", diff, tolerance)
	}
	fmt.Println("ok")
	return nil
}

package sequence

// TestSubmitPathLayers is the experiment behind docs/BENCHMARKS.md
// ("Submit path, pinned"): the one-dispatch submit + wait of
// bench's dispatch1024, layer by layer, in one process, the variants
// alternated round by round so that they share the machine's noise. It
// logs medians and cgo calls per submit + wait; it runs when
// VKFLOW_SUBMITPROF=1, best pinned as bench/run.sh's pinned pass is:
//
//	go test -c -o /tmp/seq.test ./sequence
//	cd sequence && VKFLOW_SUBMITPROF=1 GOMAXPROCS=1 taskset -c 1 /tmp/seq.test -test.run TestSubmitPathLayers -test.v
//
// Variants: raw (vkQueueSubmit of the sequence's command buffer
// signalling a timeline of the test's, then vkWaitSemaphores in 50 ms
// slices, from Go, nothing of vkflow's around them), raw_extra_cmdbuf (the
// same with an empty command buffer before it in the batch, as a prelude
// is), queue (core.Queue.SubmitTracked without hazard tracking, then
// Queue.Wait), queue_hazards (with the sequence's tracking) and eval
// (Sequence.Eval).

import (
	"context"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

func TestSubmitPathLayers(t *testing.T) {
	if os.Getenv("VKFLOW_SUBMITPROF") != "1" {
		t.Skip("set VKFLOW_SUBMITPROF=1 to run the experiment")
	}
	m, err := vkflow.New(vkflow.WithValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	const n = 1024
	var ts []*tensor.Tensor
	for range 3 {
		x, err := tensor.New(m, tensor.Float32, []int{n})
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, x)
	}
	mul, err := kernels.MultiplyScalar(m, ts[0], ts[1], ts[2])
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Dispatch(mul).Eval(ctx); err != nil {
		t.Fatal(err)
	}
	d := s.dev
	tl, err := d.VK.CreateTimeline(0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.VK.DestroySemaphore(tl)
	pool, err := d.VK.CreateCommandPool(s.q.Family, vk.CommandPoolResetBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer d.VK.DestroyCommandPool(pool)
	empty, err := d.VK.AllocateCommandBuffer(pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := vk.BeginCommandBuffer(empty, vk.CommandBufferSimultaneousUse); err != nil {
		t.Fatal(err)
	}
	if err := vk.EndCommandBuffer(empty); err != nil {
		t.Fatal(err)
	}
	var tv uint64
	var lastYield time.Time
	raw := func(pre vk.CommandBuffer) error {
		// The same yield as core's waits (maybeYield), so that sysmon
		// treats both alike.
		if time.Since(lastYield) >= 5*time.Millisecond {
			lastYield = time.Now()
			runtime.Gosched()
		}
		tv++
		if err := vk.QueueSubmitSignalPre(s.q.VK(), pre, s.cmd, tl, tv); err != nil {
			return err
		}
		for {
			err := d.VK.WaitSemaphore(tl, tv, uint64(50*time.Millisecond))
			if e, ok := err.(*vk.Error); !ok || e.Result != vk.Timeout {
				return err
			}
		}
	}
	queue := func(tracked bool) error {
		h := s.hz
		if !tracked {
			h = nil
		}
		s.mu.Lock()
		v, err := s.q.SubmitTracked(s.cmd, h)
		s.mu.Unlock()
		if err != nil {
			return err
		}
		return s.q.Wait(ctx, v)
	}
	variants := []struct {
		name string
		f    func() error
	}{
		{"raw", func() error { return raw(nil) }},
		{"raw_extra_cmdbuf", func() error { return raw(empty) }},
		{"queue", func() error { return queue(false) }},
		{"queue_hazards", func() error { return queue(true) }},
		{"eval", func() error { return s.Eval(ctx) }},
	}
	const rounds, iters = 7, 2000
	ns := make([][]float64, len(variants))
	cgo := make([]float64, len(variants))
	for r := range rounds {
		for i, v := range variants {
			for range 20 { // warm-up
				if err := v.f(); err != nil {
					t.Fatal(err)
				}
			}
			c0, t0 := runtime.NumCgoCall(), time.Now()
			for range iters {
				if err := v.f(); err != nil {
					t.Fatal(err)
				}
			}
			ns[i] = append(ns[i], float64(time.Since(t0).Nanoseconds())/iters)
			if r == 0 {
				cgo[i] = float64(runtime.NumCgoCall()-c0) / iters
			}
		}
	}
	t.Logf("GOMAXPROCS=%d, %d rounds of %d submit+waits per variant", runtime.GOMAXPROCS(0), rounds, iters)
	for i, v := range variants {
		x := slices.Clone(ns[i])
		slices.Sort(x)
		t.Logf("%-17s median %6.0f ns, min %6.0f, max %6.0f; cgo calls per submit+wait %.2f", v.name, x[len(x)/2], x[0], x[len(x)-1], cgo[i])
	}
	for _, c := range []interface{ Close() error }{s, mul, ts[0], ts[1], ts[2]} {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
}

package core

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/vkflow/vkflow/vk"
)

// A trace of a device's work in Chrome's trace-event format (Config.Trace,
// VKFLOW_TRACE), which Perfetto and chrome://tracing open:
//
//   - GPU spans, one track per physical queue: every batch handed to the
//     driver, timed by timestamp queries written first and last in the
//     batch, put on the host clock by an offset measured when the trace
//     starts (a submit of two timestamps between two host clock reads: the
//     GPU's first tick is placed at the middle of the host interval, the
//     tightest of several tries);
//   - host spans: vkQueueSubmit (a track per physical queue), waits on a
//     timeline (async: polled, or slept in vkWaitSemaphores), a submit
//     held back by the scheduler until its waits were promised (async),
//     and command buffer recording (Span, from the graph and sequence
//     packages);
//   - flow arrows from each batch to the batches that wait for a value it
//     signals (the first signal of that timeline at or above the value).
//
// With tracing off (the default) the device has no tracer, and the submit
// and wait paths only test a nil pointer: they still allocate nothing.
// Tracing allocates for each submit. The file is written when the device
// closes.

// traceSlots is how many batches of one physical queue may be timed at
// once; a batch submitted while every slot waits for its results is traced
// without a GPU span (Dropped in the trace's metadata).
const traceSlots = 512

type tracer struct {
	dev  *Device
	path string
	t0   time.Time

	mu     sync.Mutex
	events []traceEvent
	nextID uint64

	// GPU timing (nil pool: the device has no timestamps).
	pool    vk.QueryPool
	period  float64   // nanoseconds per tick
	offset  float64   // host µs since t0 = ticks*period/1000 + offset
	spread  float64   // the offset's bound, µs (half the tightest interval, or the deviation)
	clock   string    // how the offset was found
	mono0   uint64    // CLOCK_MONOTONIC (ns) at t0
	queues  [][]*slot // per physical queue
	cmdPool map[uint32]vk.CommandPool
	pending []*gpuBatch
	spans   []*gpuBatch // harvested, for the flows
	dropped int
}

// slot is a pair of timestamp queries and the command buffers that write
// them.
type slot struct {
	query      uint32 // first of two
	begin, end vk.CommandBuffer
	busy       bool
}

// semValue is one timeline value of a batch's waits or signals.
type semValue struct {
	sem   vk.Semaphore
	value uint64
}

// gpuBatch is one traced batch.
type gpuBatch struct {
	q          *Queue
	value      uint64 // its queue timeline value
	slot       *slot
	waits      []semValue
	signals    []semValue
	start, end float64 // µs on the host clock, once harvested
}

// traceEvent is one event of the JSON file.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	ID   uint64         `json:"id,omitempty"`
	Bp   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// Tracks: GPU queue q is tid 1+q, host submits to it 101+q, the async host
// events (waits, holds) 200, recording 201.
const (
	tidGPU    = 1
	tidSubmit = 101
	tidAsync  = 200
	tidRecord = 201
)

// startTrace makes d's tracer, writing to path at Close, and finds the
// GPU clock's offset: calibrated (VK_EXT_calibrated_timestamps enabled), or
// measured. Called by Open once the queues exist.
func (d *Device) startTrace(path string, calibrated bool) error {
	t := &tracer{dev: d, path: path, t0: time.Now(), cmdPool: map[uint32]vk.CommandPool{}}
	t.mono0 = vk.MonotonicNs() // CLOCK_MONOTONIC at t0, for calibrated timestamps
	t.clock = "none: the queues write no timestamps"
	t.period = float64(d.Info.Limits.TimestampPeriod)
	timed := t.period > 0
	for _, q := range d.queues {
		timed = timed && d.Info.QueueFamilies[q.Family].TimestampValidBits > 0
	}
	if timed {
		if err := t.makeSlots(); err != nil {
			t.destroy()
			return err
		}
		calibrate := t.measure
		if calibrated {
			calibrate = t.calibrate
		}
		if err := calibrate(); err != nil {
			t.destroy()
			return err
		}
	}
	d.tracer = t
	return nil
}

// makeSlots creates the query pool and each queue's slots.
func (t *tracer) makeSlots() error {
	d := t.dev
	pool, err := d.VK.CreateTimestampPool(uint32(2 * traceSlots * len(d.queues)))
	if err != nil {
		return err
	}
	t.pool = pool
	for qi, q := range d.queues {
		cp, ok := t.cmdPool[q.Family]
		if !ok {
			if cp, err = d.VK.CreateCommandPool(q.Family, 0); err != nil {
				return err
			}
			t.cmdPool[q.Family] = cp
		}
		var slots []*slot
		for i := range traceSlots {
			s := &slot{query: uint32(2 * (qi*traceSlots + i))}
			if s.begin, err = record(d, cp, func(c vk.CommandBuffer) {
				vk.CmdResetQueryPool(c, pool, s.query, 2)
				vk.CmdWriteTimestamp(c, vk.StageTopOfPipe, pool, s.query)
			}); err != nil {
				return err
			}
			if s.end, err = record(d, cp, func(c vk.CommandBuffer) {
				vk.CmdWriteTimestamp(c, vk.StageBottomOfPipe, pool, s.query+1)
			}); err != nil {
				return err
			}
			slots = append(slots, s)
		}
		t.queues = append(t.queues, slots)
	}
	return nil
}

// record allocates a command buffer from cp and records f into it.
func record(d *Device, cp vk.CommandPool, f func(vk.CommandBuffer)) (vk.CommandBuffer, error) {
	c, err := d.VK.AllocateCommandBuffer(cp)
	if err != nil {
		return nil, err
	}
	if err := vk.BeginCommandBuffer(c, 0); err != nil {
		return nil, err
	}
	f(c)
	return c, vk.EndCommandBuffer(c)
}

// calibrate reads the GPU's timestamp counter together with
// CLOCK_MONOTONIC (VK_EXT_calibrated_timestamps) five times and keeps the
// pair of the smallest deviation, which bounds the offset.
func (t *tracer) calibrate() error {
	best := uint64(0)
	for k := range 5 {
		gpu, host, dev, err := t.dev.VK.CalibratedTimestamps()
		if err != nil {
			return err
		}
		if k == 0 || dev < best {
			best = dev
			t.offset = calibratedOffset(gpu, host, t.mono0, t.period)
			t.spread = float64(dev) / 1000
		}
	}
	t.clock = "calibrated (VK_EXT_calibrated_timestamps)"
	return nil
}

// calibratedOffset is the offset (µs) that puts a GPU timestamp of period
// ns per tick on the trace's clock (µs since t0, CLOCK_MONOTONIC mono0 ns),
// from a GPU timestamp gpu read together with CLOCK_MONOTONIC host ns.
func calibratedOffset(gpu, host, mono0 uint64, period float64) float64 {
	return (float64(int64(host-mono0)) - float64(gpu)*period) / 1000
}

// measure measures the offset of the GPU clock: a batch of the two
// timestamps alone on queue 0, between two host clock reads, five times;
// the tightest interval's middle is the first timestamp's host time.
func (t *tracer) measure() error {
	t.clock = "measured offset"
	q := t.dev.queues[0]
	s := t.queues[0][0]
	best := -1.0
	for range 5 {
		h0 := t.now()
		q.mu.Lock()
		v := q.submitted.Load() + 1
		err := vk.QueueSubmit(q.handle, &vk.Submit{Begin: s.begin, End: s.end,
			SignalSems: []vk.Semaphore{q.sem}, SignalValues: []uint64{v}})
		if err == nil {
			q.submitted.Store(v)
		}
		q.mu.Unlock()
		if err != nil {
			return err
		}
		if err := t.dev.VK.WaitSemaphore(q.sem, v, uint64(10*time.Second)); err != nil {
			return err
		}
		h1 := t.now()
		var ts [2]uint64
		if err := t.dev.VK.QueryResults64(t.pool, s.query, ts[:]); err != nil {
			return err
		}
		if best < 0 || h1-h0 < best {
			best = h1 - h0
			t.offset = (h0+h1)/2 - float64(ts[0])*t.period/1000
			t.spread = best / 2
		}
	}
	return nil
}

// now is the host clock in µs since the trace began.
func (t *tracer) now() float64 { return float64(time.Since(t.t0).Nanoseconds()) / 1000 }

func (t *tracer) at(tm time.Time) float64 { return float64(tm.Sub(t.t0).Nanoseconds()) / 1000 }

// beginSubmit picks a slot for a batch of q (nil: none free, or no
// timestamps) and sets s's Begin and End. Called with q's lock held.
func (t *tracer) beginSubmit(q *Queue, s *vk.Submit) *slot {
	if t.pool == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	sl := t.freeSlot(q)
	if sl == nil {
		t.harvest(false)
		if sl = t.freeSlot(q); sl == nil {
			t.dropped++
			return nil
		}
	}
	sl.busy = true
	s.Begin, s.End = sl.begin, sl.end
	return sl
}

func (t *tracer) freeSlot(q *Queue) *slot {
	for _, s := range t.queues[q.Index] {
		if !s.busy {
			return s
		}
	}
	return nil
}

// submitted records a batch handed to q's driver (err nil) as value v:
// its host span from start, and its GPU span to harvest.
func (t *tracer) submitted(q *Queue, s *vk.Submit, sl *slot, v uint64, start float64, err error) {
	end := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	dur := end - start
	args := map[string]any{"queue": q.Index, "value": v, "waits": len(s.WaitSems), "signals": len(s.SignalSems)}
	if err != nil {
		args["error"] = err.Error()
	}
	t.events = append(t.events, traceEvent{Name: "vkQueueSubmit", Cat: "host", Ph: "X", Ts: start, Dur: &dur,
		Pid: 1, Tid: tidSubmit + q.Index, Args: args})
	if sl == nil {
		return
	}
	if err != nil {
		sl.busy = false
		return
	}
	b := &gpuBatch{q: q, value: v, slot: sl}
	for i, sem := range s.WaitSems {
		b.waits = append(b.waits, semValue{sem, s.WaitValues[i]})
	}
	for i, sem := range s.SignalSems {
		b.signals = append(b.signals, semValue{sem, s.SignalValues[i]})
	}
	t.pending = append(t.pending, b)
}

// harvest reads the timestamps of the pending batches that completed
// (all, when all is set: the device is idle). Called with t.mu held.
func (t *tracer) harvest(all bool) {
	keep := t.pending[:0]
	for _, b := range t.pending {
		if !all && b.q.Completed() < b.value {
			keep = append(keep, b)
			continue
		}
		var ts [2]uint64
		if err := t.dev.VK.QueryResults64(t.pool, b.slot.query, ts[:]); err == nil {
			b.start = float64(ts[0])*t.period/1000 + t.offset
			b.end = float64(ts[1])*t.period/1000 + t.offset
			t.spans = append(t.spans, b)
		} else {
			t.dropped++
		}
		b.slot.busy = false
		b.slot = nil
	}
	t.pending = keep
}

// async records an async host span (a wait, a hold) from start to now.
func (t *tracer) async(name string, start float64, args map[string]any) {
	end := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nextID++
	id := t.nextID
	t.events = append(t.events,
		traceEvent{Name: name, Cat: "host", Ph: "b", Ts: start, Pid: 1, Tid: tidAsync, ID: id, Args: args},
		traceEvent{Name: name, Cat: "host", Ph: "e", Ts: end, Pid: 1, Tid: tidAsync, ID: id})
}

// wait records a host wait for value v that began at start: polled, or
// slept in vkWaitSemaphores (a wait answered from the cache of completed
// values reaches neither).
func (t *tracer) wait(start float64, w *waitState, v uint64) {
	how := "slept"
	switch {
	case w.first:
		how = "not needed"
	case w.polled:
		how = "polled"
	}
	t.async("wait", start, map[string]any{"value": v, "how": how})
}

// Tracing reports whether the device records a trace: callers that time
// their own work (Span) test it first, so that they read no clock when it
// is off.
func (d *Device) Tracing() bool { return d.tracer != nil }

// Span records a host span of the trace (recording, compiling) from start
// to now; a no-op when the device does not trace.
func (d *Device) Span(name string, start time.Time, args map[string]any) {
	t := d.tracer
	if t == nil {
		return
	}
	s := t.at(start)
	dur := t.now() - s
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, traceEvent{Name: name, Cat: "host", Ph: "X", Ts: s, Dur: &dur, Pid: 1, Tid: tidRecord, Args: args})
}

// finish harvests every batch (the device is idle), writes the file and
// frees the tracer's objects.
func (t *tracer) finish() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pool != 0 {
		t.harvest(true)
	}
	err := t.write()
	t.destroy()
	return err
}

// write puts the events, the GPU spans and their flows into the file.
func (t *tracer) write() error {
	evs := []traceEvent{{Name: "process_name", Ph: "M", Pid: 1, Args: map[string]any{"name": "vkflow: " + t.dev.Info.Name}}}
	name := func(tid int, s string) {
		evs = append(evs, traceEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: tid, Args: map[string]any{"name": s}})
	}
	for _, q := range t.dev.queues {
		name(tidGPU+q.Index, fmt.Sprintf("GPU queue %d (family %d)", q.Index, q.Family))
		name(tidSubmit+q.Index, fmt.Sprintf("host: submits to queue %d", q.Index))
	}
	name(tidAsync, "host: waits and holds")
	name(tidRecord, "host: recording")
	evs = append(evs, t.events...)
	sort.Slice(t.spans, func(i, j int) bool { return t.spans[i].start < t.spans[j].start })
	// Each timeline's signals by value, for the flows.
	signals := map[vk.Semaphore][]*gpuBatch{}
	for _, b := range t.spans {
		dur := b.end - b.start
		evs = append(evs, traceEvent{Name: fmt.Sprintf("batch %d", b.value), Cat: "gpu", Ph: "X", Ts: b.start, Dur: &dur,
			Pid: 1, Tid: tidGPU + b.q.Index, Args: map[string]any{"queue": b.q.Index, "value": b.value,
				"waits": len(b.waits), "signals": len(b.signals)}})
		for _, s := range b.signals {
			signals[s.sem] = append(signals[s.sem], b)
		}
	}
	signalled := func(b *gpuBatch, sem vk.Semaphore) uint64 {
		for _, s := range b.signals {
			if s.sem == sem {
				return s.value
			}
		}
		return 0
	}
	for sem, bs := range signals {
		sort.Slice(bs, func(i, j int) bool { return signalled(bs[i], sem) < signalled(bs[j], sem) })
	}
	var flow uint64
	for _, b := range t.spans {
		for _, w := range b.waits {
			bs := signals[w.sem]
			i := sort.Search(len(bs), func(i int) bool { return signalled(bs[i], w.sem) >= w.value })
			if i == len(bs) || bs[i] == b {
				continue // signalled from the host, or before the trace
			}
			p := bs[i]
			flow++
			evs = append(evs,
				traceEvent{Name: "timeline", Cat: "flow", Ph: "s", Ts: max(p.start, p.end-0.001), Pid: 1, Tid: tidGPU + p.q.Index, ID: flow,
					Args: map[string]any{"value": w.value}},
				traceEvent{Name: "timeline", Cat: "flow", Ph: "f", Bp: "e", Ts: b.start, Pid: 1, Tid: tidGPU + b.q.Index, ID: flow})
		}
	}
	meta := map[string]any{"dropped": t.dropped, "gpuClock": t.clock, "gpuClockBoundUs": t.spread, "timestampPeriodNs": t.period}
	out, err := json.Marshal(map[string]any{"traceEvents": evs, "displayTimeUnit": "ns", "metadata": meta})
	if err != nil {
		return fmt.Errorf("vkflow: trace: %w", err)
	}
	if err := os.WriteFile(t.path, out, 0o644); err != nil {
		return fmt.Errorf("vkflow: trace: %w", err)
	}
	return nil
}

// destroy frees the query pool and the command pools (with their command
// buffers).
func (t *tracer) destroy() {
	d := t.dev
	for _, cp := range t.cmdPool {
		d.VK.DestroyCommandPool(cp)
	}
	t.cmdPool = map[uint32]vk.CommandPool{}
	if t.pool != 0 {
		d.VK.DestroyQueryPool(t.pool)
		t.pool = 0
	}
	t.queues = nil
}

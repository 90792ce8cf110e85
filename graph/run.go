package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// RunOption orders a run against timeline points outside the graph.
type RunOption func(*runOpts) error

type runOpts struct {
	waits, signals []timeline.Point
}

// Wait makes the run start, on the GPU, only once t reaches v (a point a
// DLPack consumer or another sequence signals, say). The run is held on
// the host until the point is promised, as sequence.Submit holds.
func Wait(t *timeline.Timeline, v uint64) RunOption {
	return func(o *runOpts) error {
		if t == nil {
			return core.Invalid("Wait: nil timeline")
		}
		o.waits = append(o.waits, timeline.Point{Timeline: t, Value: v})
		return nil
	}
}

// Signal makes the run set t to v once all of its work is complete.
// Values must increase on t across every signal, host or GPU.
func Signal(t *timeline.Timeline, v uint64) RunOption {
	return func(o *runOpts) error {
		if t == nil {
			return core.Invalid("Signal: nil timeline")
		}
		o.signals = append(o.signals, timeline.Point{Timeline: t, Value: v})
		return nil
	}
}

// run is one submitted run.
type run struct {
	e       *Exec
	subs    []*core.Submission // per segment, in plan order, then the join
	before  []uint64           // the segments' values before this run (Exec.prevVals)
	final   []timeline.Point   // per slot used: its last value in the run
	err     error
	read    bool  // its downloads were copied out, or failed to be; guarded by e.mu
	readErr error // why they could not be: every later Wait returns it
}

// Pending is a submitted run. Copies refer to the same run.
type Pending struct{ r *run }

// Wait blocks until the run completes, ctx ends (returning ctx.Err()), or
// a submit of the run failed (returning its error). After the first
// successful Wait, the downloads' host slices hold the run's results.
func (p Pending) Wait(ctx context.Context) error {
	r := p.r
	if r == nil {
		return core.Invalid("graph: Wait on a zero Pending")
	}
	if r.err != nil {
		return r.err
	}
	for _, s := range r.subs {
		if err := s.WaitReleased(ctx); err != nil {
			return err
		}
		if _, err := s.Result(); err != nil {
			return fmt.Errorf("graph: %w", err)
		}
	}
	// The highest value on each physical queue completes after every
	// earlier submit there (held submits may be released out of order);
	// waiting on the queue's own value also lets the queue see that the
	// Exec's objects are idle.
	top := map[*core.Queue]uint64{}
	for _, s := range r.subs {
		v, _ := s.Result()
		top[s.Q] = max(top[s.Q], v)
	}
	for q, v := range top {
		if err := q.Wait(ctx, v); err != nil {
			return err
		}
	}
	r.e.mu.Lock()
	defer r.e.mu.Unlock()
	return r.e.readDownloads(r)
}

// Err returns the error of submitting the run, if that failed (a submit
// held back reports its error once released).
func (p Pending) Err() error {
	r := p.r
	if r == nil {
		return core.Invalid("graph: zero Pending")
	}
	if r.err != nil {
		return r.err
	}
	for _, s := range r.subs {
		select {
		case <-s.Released():
			if _, err := s.Result(); err != nil {
				return fmt.Errorf("graph: %w", err)
			}
		default:
		}
	}
	return nil
}

// Done reports without blocking whether the run completed or failed.
func (p Pending) Done() bool {
	r := p.r
	if r == nil || r.err != nil {
		return true
	}
	return r.done()
}

func (r *run) done() bool {
	for _, s := range r.subs {
		select {
		case <-s.Released():
			if _, err := s.Result(); err != nil {
				return true
			}
		default:
			return false
		}
	}
	for _, f := range r.final {
		v, err := f.Timeline.Value()
		if err != nil {
			return true
		}
		if v < f.Value {
			return false
		}
	}
	return true
}

// Run replays the graph and waits for it. A graph with uploads or
// downloads first waits for the previous run, which owns the staging
// buffers until it completes (also one started by another goroutine).
func (e *Exec) Run(ctx context.Context, opts ...RunOption) error {
	for {
		e.mu.Lock()
		prev, exclusive := e.pending, e.host || e.dirty
		e.mu.Unlock()
		if exclusive && prev != nil {
			if err := (Pending{prev}).Wait(ctx); err != nil && ctx.Err() != nil {
				return err
			}
		}
		p := e.RunAsync(opts...)
		if err := p.Err(); errors.Is(err, core.ErrPending) && exclusive {
			continue // another goroutine's run took the staging first
		}
		return p.Wait(ctx)
	}
}

// RunAsync replays the graph without re-recording it and returns at once:
// each segment's command buffer is submitted with the waits and signals
// the plan computed. A run waits on the GPU for the previous one where
// they conflict (package doc). A graph with uploads or downloads has one set of staging buffers:
// RunAsync returns ErrPending while the previous run is still in flight
// (Run waits for it instead). It never blocks.
//
// A run is admitted whole or not at all: all of its submits go to the
// scheduler as one unit, so a refusal (ErrBusy at the WithMaxHeldSubmits
// bound, which counts every submit of the run that would be held; ErrInvalid
// for a Signal value that does not increase; ErrClosed) leaves nothing
// submitted or held. A segment that fails after admission fails the
// segments and the Signal points downstream of it (package timeline,
// Failures), and Pending.Wait returns that error.
func (e *Exec) RunAsync(opts ...RunOption) Pending {
	fail := func(err error) Pending { return Pending{&run{err: err}} }
	var ro runOpts
	for _, f := range opts {
		if f == nil {
			continue
		}
		if err := f(&ro); err != nil {
			return fail(fmt.Errorf("graph: %w", err))
		}
	}
	d := e.dev
	if err := d.Enter(); err != nil {
		return fail(err)
	}
	defer d.Exit()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.obj.Closed() {
		return fail(core.Closed("graph Exec"))
	}
	if err := e.usable(); err != nil {
		return fail(err)
	}
	if (e.host || e.dirty) && e.pending != nil && !e.pending.done() {
		return fail(fmt.Errorf("graph: RunAsync: %w (the previous run still uses the staging buffers or command buffers; wait for it)", core.ErrPending))
	}
	if e.dirty {
		if err := e.recordAll(); err != nil {
			return fail(fmt.Errorf("graph: re-recording: %w", d.Check(err)))
		}
	}
	if prev := e.pending; prev != nil && prev.err == nil && e.host {
		// The next run reuses the staging buffers: a completed run nobody
		// waited for yet gets its results now, not the next run's.
		if err := e.readDownloads(prev); err != nil {
			return fail(err)
		}
	}
	if len(ro.signals) > 0 {
		// Refused before the first segment is submitted, not at the last.
		ps := make([]core.Point, len(ro.signals))
		for i, p := range ro.signals {
			ps[i] = core.Point{TL: p.Timeline.State(), Value: p.Value}
		}
		if err := d.CheckSignals(ps); err != nil {
			return fail(fmt.Errorf("graph: Signal: %w", err))
		}
	}
	if err := e.writeUploads(); err != nil {
		return fail(err)
	}
	r, err := e.submit(ro)
	if err != nil {
		return fail(err)
	}
	e.pending = r
	return Pending{r}
}

// usable checks that no tensor or algorithm was closed.
func (e *Exec) usable() error {
	for i := range e.nodes {
		n := &e.nodes[i]
		for k, t := range n.tensors {
			if t.Closed() {
				return fmt.Errorf("graph: node %s: tensor %d: %w", n.label(i), k, core.ErrClosed)
			}
		}
		if n.algo != nil && n.algo.Object().Closed() {
			return fmt.Errorf("graph: node %s: algorithm: %w", n.label(i), core.ErrClosed)
		}
	}
	return nil
}

// submit schedules every segment, in plan order. Called with mu held.
func (e *Exec) submit(ro runOpts) (*run, error) {
	p := e.plan
	e.forgetFailed()
	r := &run{e: e, before: append([]uint64(nil), e.prevVals...)}
	vals := make([]uint64, len(p.segs))
	defer func() { copy(e.prevVals, vals) }()
	lastSeg := make([]int, len(p.slots)) // per slot: its last segment
	for i := range lastSeg {
		lastSeg[i] = -1
	}
	for _, seg := range p.segs {
		lastSeg[seg.q] = seg.id
	}
	join := len(ro.signals) > 0 && countUsed(lastSeg) > 1
	var tlRefs []*timeline.Timeline
	for _, pt := range append(append([]timeline.Point(nil), ro.waits...), ro.signals...) {
		if !pt.Timeline.Object().TryAcquire() {
			for _, t := range tlRefs {
				t.Object().Release()
			}
			return nil, fmt.Errorf("graph: run: timeline: %w", core.ErrClosed)
		}
		tlRefs = append(tlRefs, pt.Timeline)
	}
	defer func() {
		for _, t := range tlRefs {
			t.Object().Release()
		}
	}()
	point := func(t *timeline.Timeline, v uint64) core.Point {
		return core.Point{TL: t.State(), Value: v, Stage: vk.StageAllCommands}
	}
	// The run's submits are built first and handed to the scheduler as
	// one unit (core.ScheduleAll): a run is admitted whole or not at all.
	next, last := append([]uint64(nil), e.next...), append([]uint64(nil), e.last...)
	var subs []*core.Submission
	schedule := func(q int, cmd vk.CommandBuffer, h *core.Hazards, waits, signals []core.Point, objs []*core.Object) {
		next[q]++
		v := next[q]
		signals = append(signals, point(e.tls[q], v))
		sub := &core.Submission{Q: e.queues[q], Cmd: cmd, Hazards: h, Waits: waits, Signals: signals, Logical: p.slots[q]}
		sub.OnRelease = func(qv uint64, err error) {
			if err == nil {
				qi := e.queues[q].Index
				e.obj.MarkUse(qi, qv)
				for _, o := range objs {
					o.MarkUse(qi, qv)
				}
			} else {
				for _, o := range objs {
					o.Fail(err) // its segment's writes never happened
				}
			}
			// OnRelease may run inside ScheduleAll, under e.mu.
			e.inflight.Add(-1)
			e.obj.Release()
		}
		last[q] = v
		subs = append(subs, sub)
	}
	for _, seg := range p.segs {
		var waits []core.Point
		for _, w := range seg.waits {
			waits = append(waits, point(e.tls[w.q], vals[p.bySlot[w.q][w.k]]))
		}
		for _, w := range seg.prev {
			// What this segment conflicts with in the previous run.
			if v := e.prevVals[p.bySlot[w.q][w.k]]; v > 0 {
				waits = append(waits, point(e.tls[w.q], v))
			}
		}
		if seg.k == 0 {
			for _, w := range ro.waits {
				waits = append(waits, point(w.Timeline, w.Value))
			}
		}
		var signals []core.Point
		if !join && seg.id == len(p.segs)-1 {
			for _, s := range ro.signals {
				signals = append(signals, point(s.Timeline, s.Value))
			}
		}
		schedule(seg.q, e.cmds[seg.id], e.hz[seg.id], waits, signals, e.objs[seg.id])
		vals[seg.id] = last[seg.q]
	}
	if join {
		// One empty submit on the last segment's queue waits for every
		// queue's last segment and signals the user's points.
		jq := p.segs[len(p.segs)-1].q
		var waits, signals []core.Point
		for q, k := range lastSeg {
			if k >= 0 && q != jq {
				waits = append(waits, point(e.tls[q], vals[k]))
			}
		}
		for _, s := range ro.signals {
			signals = append(signals, point(s.Timeline, s.Value))
		}
		schedule(jq, nil, nil, waits, signals, nil)
	}
	for range subs {
		e.obj.Acquire()
	}
	e.inflight.Add(int64(len(subs)))
	if err := e.dev.ScheduleAll(subs); err != nil {
		e.inflight.Add(-int64(len(subs)))
		for range subs {
			e.obj.Release()
		}
		copy(vals, e.prevVals) // nothing was submitted: the last run's values stand
		r.err = fmt.Errorf("graph: %w", err)
		return r, nil
	}
	copy(e.next, next)
	copy(e.last, last)
	r.subs = subs
	for q, k := range lastSeg {
		if k >= 0 {
			r.final = append(r.final, timeline.Point{Timeline: e.tls[q], Value: e.last[q]})
		}
	}
	return r, nil
}

// forgetFailed makes the segments of the previous run that failed (they
// never ran) stand for nothing in the next run's cross-run waits: their
// value goes back to the one before that run, so that the next run waits
// for what did run, not for a value that failed. Called with mu held.
func (e *Exec) forgetFailed() {
	prev := e.pending
	if prev == nil || prev.before == nil {
		return
	}
	for k := range e.prevVals {
		if k >= len(prev.subs) {
			break
		}
		select {
		case <-prev.subs[k].Released():
			if _, err := prev.subs[k].Result(); err != nil {
				e.prevVals[k] = prev.before[k]
			}
		default: // still held: if it fails, what waits on it fails too
		}
	}
}

func countUsed(lastSeg []int) int {
	n := 0
	for _, k := range lastSeg {
		if k >= 0 {
			n++
		}
	}
	return n
}

// writeUploads copies each upload's host slice into its staging buffer.
// Called with mu held, with no run using the staging buffers.
func (e *Exec) writeUploads() error {
	for i, n := range e.nodes {
		if n.kind != KindUpload {
			continue
		}
		a := e.stage[i]
		copy(a.Bytes(), n.host)
		if err := e.dev.Flush(a); err != nil {
			return fmt.Errorf("graph: upload %s: %w", n.label(i), e.dev.Check(err))
		}
	}
	return nil
}

// readDownloads copies each download's staging buffer into its host slice
// once run r completed, the first time only; a failure sticks, so that a
// later Wait does not report the downloads as done. Called with mu held.
func (e *Exec) readDownloads(r *run) error {
	if !r.read {
		r.read = true
		r.readErr = e.copyDownloads()
	}
	return r.readErr
}

func (e *Exec) copyDownloads() error {
	for i, n := range e.nodes {
		if n.kind != KindDownload {
			continue
		}
		a := e.stage[i]
		if a == nil {
			return core.Closed("graph Exec")
		}
		if err := e.dev.Invalidate(a); err != nil {
			return fmt.Errorf("graph: download %s: %w", n.label(i), e.dev.Check(err))
		}
		copy(n.host, a.Bytes())
	}
	return nil
}

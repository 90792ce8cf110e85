package opcore

import (
	"sync"
	"time"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// The output pool of a Stream: the memory of outputs the stream allocated
// (hits of the prepared-op cache) goes back to the stream when their
// tensors are destroyed, and a later output of the same size gets it
// instead of a new buffer (no vkCreateBuffer, no bind, no destroy, and no
// global barrier for a destroyed buffer on the next submit).
//
// When: a tensor is destroyed once it is closed (by the program, or by
// Python's garbage collector), no sequence, DLPack export or view holds it
// any more, and the GPU has passed every submitted use of it (the deferred
// destruction of package core). So memory comes back only after the work
// that last read or wrote it has completed; the stream's own sequences
// hold their tensors until their submit completes, and the stream reclaims
// them at its next call or by its idle timer, never by a host wait of its
// own. A reused buffer is cleared on the host (core.Device.Reuse) and keeps
// its hazard state, so the queue orders the new use after the old ones
// with the usual per-buffer barriers.
//
// Bounds: at most maxBytes (WithPoolSize; 0 disables the pool), counted in
// block bytes; memory the host cannot map is never kept (it would need a
// GPU fill). The pool is emptied by Synchronize, by TrimPool, when the
// stream has taken no buffer from it for poolIdleTrim (its timer runs while
// it keeps buffers), when an allocation fails (then retried once), and by
// Close; Manager.Close frees it with everything else.

// poolIdleTrim is how long a pool from which no output took a buffer keeps
// its buffers (between one and two times this).
const poolIdleTrim = 20 * time.Millisecond

// poolKey is what a kept buffer can back: outputs of that memory kind and
// buffer size.
type poolKey struct {
	kind tensor.Memory
	size uint64
}

// PoolStats are the counters of a Stream's output pool.
type PoolStats struct {
	Reused    uint64 // outputs that got a kept buffer
	Allocated uint64 // outputs that got a new buffer
	Freed     uint64 // buffers given back that the pool did not keep (full, disabled, closed, or trimmed)
	Buffers   int    // buffers kept now
	Bytes     uint64 // block bytes kept now
}

// outPool is a Stream's pool. It registers itself with the Manager as an
// object, so that Manager.Close frees what it keeps even when the stream is
// never closed (the default stream).
type outPool struct {
	dev      *core.Device
	obj      core.Object
	maxBytes uint64

	mu     sync.Mutex
	free   map[poolKey][]*core.Allocation
	bytes  uint64
	closed bool
	stats  PoolStats
	give   func(*core.Allocation) // p.put, made once
	// The trim timer: set while it will fire; outputs counts the outputs
	// made, seen the count when it last fired.
	timer         *time.Timer
	set           bool
	outputs, seen uint64
}

// newPool makes a pool of maxBytes. Called inside the device's gate.
func newPool(d *core.Device, maxBytes uint64) (*outPool, error) {
	p := &outPool{dev: d, maxBytes: maxBytes, free: map[poolKey][]*core.Allocation{}}
	p.give = p.put
	if err := p.obj.Init(d, core.KindTensor, p.drain, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// output returns a new zero-filled tensor of spec, over a kept buffer of
// its size or a new one. Called inside the device's gate.
func (p *outPool) output(spec outSpec) (*tensor.Tensor, error) {
	size, err := outBytes(spec)
	if err != nil {
		return nil, err
	}
	key := poolKey{tensor.Device, size}
	for {
		a := p.take(key)
		if a == nil {
			break
		}
		if err := p.dev.Reuse(a); err != nil {
			p.dev.Free(a)
			continue
		}
		t, err := tensor.NewOver(p.dev, a, spec.dt, spec.shape, p.give)
		if err != nil {
			p.dev.Free(a)
			return nil, err
		}
		p.count(true)
		return t, nil
	}
	a, err := p.dev.Alloc(core.MemDevice, size, core.TensorUsage)
	if err != nil && p.trim() > 0 {
		a, err = p.dev.Alloc(core.MemDevice, size, core.TensorUsage) // memory pressure: once more
	}
	if err != nil {
		return nil, err
	}
	t, err := tensor.NewOver(p.dev, a, spec.dt, spec.shape, p.give)
	if err != nil {
		p.dev.Free(a)
		return nil, err
	}
	p.count(false)
	return t, nil
}

// take pops a kept buffer for key, or returns nil.
func (p *outPool) take(key poolKey) *core.Allocation {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.free[key]
	if len(l) == 0 {
		return nil
	}
	a := l[len(l)-1]
	l[len(l)-1] = nil
	p.free[key] = l[:len(l)-1]
	p.bytes -= a.Span()
	p.stats.Buffers--
	return a
}

func (p *outPool) count(reused bool) {
	p.mu.Lock()
	p.outputs++
	if reused {
		p.stats.Reused++
	} else {
		p.stats.Allocated++
	}
	p.mu.Unlock()
}

// put is the destroy of the pool's tensors: it keeps a, or frees it when
// the pool is closed, disabled or full, or a cannot be reused.
func (p *outPool) put(a *core.Allocation) {
	p.mu.Lock()
	if p.closed || !a.Reusable() || p.bytes+a.Span() > p.maxBytes {
		p.stats.Freed++
		p.mu.Unlock()
		p.dev.Free(a)
		return
	}
	key := poolKey{a.Kind, a.Size}
	p.free[key] = append(p.free[key], a)
	p.bytes += a.Span()
	p.stats.Buffers++
	if !p.set {
		p.seen = p.outputs
		p.startTimer()
	}
	p.mu.Unlock()
}

// startTimer makes the trim timer fire after poolIdleTrim. Called with mu
// held.
func (p *outPool) startTimer() {
	if p.timer == nil {
		p.timer = time.AfterFunc(poolIdleTrim, p.fired)
	} else {
		p.timer.Reset(poolIdleTrim)
	}
	p.set = true
}

// fired runs on the trim timer's goroutine: it trims the pool when no
// output took a buffer since the timer started, else starts it again.
func (p *outPool) fired() {
	p.mu.Lock()
	p.set = false
	switch {
	case p.closed || p.bytes == 0:
		p.mu.Unlock()
		return
	case p.outputs != p.seen:
		p.seen = p.outputs
		p.startTimer()
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	if err := p.dev.Enter(); err != nil {
		return // Manager.Close frees the pool
	}
	defer p.dev.Exit()
	p.trim()
}

// trim frees every kept buffer and returns how many. The caller is inside
// the device's gate.
func (p *outPool) trim() int {
	p.mu.Lock()
	var all []*core.Allocation
	for k, l := range p.free {
		all = append(all, l...)
		delete(p.free, k)
	}
	p.bytes, p.stats.Buffers = 0, 0
	p.stats.Freed += uint64(len(all))
	p.mu.Unlock()
	for _, a := range all {
		p.dev.Free(a)
	}
	return len(all)
}

// drain is the pool object's destroy (Stream.Close, Manager.Close): it
// frees what the pool keeps, and buffers given back later are freed at
// once.
func (p *outPool) drain() {
	p.mu.Lock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	p.trim()
}

// close closes the pool object (its drain runs now, inside the gate).
func (p *outPool) close() {
	p.obj.Close()
}

func (p *outPool) snapshot() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stats
	st.Bytes = p.bytes
	return st
}

// outBytes is the buffer size of an output of spec (as tensor.New makes).
func outBytes(spec outSpec) (uint64, error) {
	n := uint64(spec.dt.Size())
	for _, d := range spec.shape {
		if d < 0 {
			return 0, core.Invalid("ops: negative dimension %d in a prepared output", d)
		}
		n *= uint64(d)
	}
	return core.TensorBufferSize(n), nil
}

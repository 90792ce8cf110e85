package opcore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// Stream runs ops one call at a time, as NumPy, CuPy or PyTorch users call
// them, with CUDA-stream semantics: Call returns once the op is submitted,
// and the host waits only where data must reach it (Tensor.Wait before a
// host read, Synchronize, or the C API's and Python's reads).
//
// Order: every call's command buffer goes to the stream's queue in call
// order, and the queue's hazard tracking puts the barriers between a call
// and the earlier work on the same queue that wrote what it reads, or read
// or wrote what it writes. Uses of its tensors submitted on other queues
// are waited for on the GPU (sequence.AfterUses). So a call sees exactly
// what the calls before it wrote, from any goroutine, and none of this
// blocks the host.
//
// Cache: ops are prepared once per key (op, attributes, dtypes, shapes,
// aliasing, given outputs) and kept in a bounded LRU (WithCacheSize),
// with up to four recorded command buffers each (stream_rec.go): a later
// call over buffers a recording names submits it untouched, others record
// one again. Manager.OpCacheStats reports hits, misses and evictions.
//
// Lifetimes: a call holds references on its tensors until its submit
// completes, so closing an input or output right after Call is safe; the
// memory is freed once the GPU is done, or, where an idle recording names
// the buffer, once the stream goes idle or Synchronize or TrimPool runs
// (stream_rec.go). Writing an input from the host
// while a queued call may still read it is not: call Wait on the tensor
// first (the C API's and Python's writes do).
//
// Memory: outputs a call allocates on a cache hit come from the stream's
// output pool (pool.go): buffers of the stream's earlier outputs whose
// tensors were destroyed, reused once the GPU is done with them, cleared
// to zero. WithPoolSize bounds it; Synchronize and TrimPool empty it.
//
// Ownership: the stream owns its prepared ops, its pool of sequences and
// its output pool; Close releases them. Outputs a call allocates belong to
// the caller. A Stream is safe for concurrent use.
type Stream struct {
	owner   Owner
	dev     *core.Device
	queue   int
	q       *core.Queue // the physical queue
	maxHeld int
	builtin bool // the Manager's DefaultStream

	mu     sync.Mutex
	cache  opCache
	free   []*sequence.Sequence // recorded-and-done sequences, cleared
	ring   []inflight           // submitted, oldest first
	last   sequence.Pending
	has    bool // last is set
	closed bool
	// armed: a completion hook (core.WhenComplete) will reclaim the ring
	// once the GPU is done with it, so an idle stream releases what its
	// calls held (tensors closed meanwhile are freed then). The hook is
	// asked for by the idle timer (stream_idle.go), not by every call.
	armed  bool
	onDone func() // s.completed, made once
	idle   idleTimer
	pool   *outPool         // nil: disabled (WithPoolSize(0))
	ts     []*tensor.Tensor // scratch of submitRecorded, cleared after use
	key    []byte           // scratch: the call's cache key
	// recordings submitted as recorded, and recorded (stream_rec.go)
	replays, records uint64
	submits          uint64 // calls submitted (LRU of recordings, idleness)
}

type inflight struct {
	seq *sequence.Sequence
	p   sequence.Pending
	rec *recording // nil: a sequence of the free pool
}

// StreamOption configures NewStream.
type StreamOption func(*streamConfig)

type streamConfig struct {
	queue, cache, held int
	pool               int64
}

// OnQueue runs the stream on logical queue i (default 0).
func OnQueue(i int) StreamOption { return func(c *streamConfig) { c.queue = i } }

// WithCacheSize bounds the prepared-op cache to n ops (default 256; at
// least 1).
func WithCacheSize(n int) StreamOption { return func(c *streamConfig) { c.cache = n } }

// WithMaxInFlight bounds the calls submitted and not yet completed
// (default 1024). A call past the bound waits on the host for the oldest;
// Manager.OpCacheStats counts those waits.
func WithMaxInFlight(n int) StreamOption { return func(c *streamConfig) { c.held = n } }

// NewStream makes a stream on the Manager o.
func NewStream(o Owner, opts ...StreamOption) (*Stream, error) {
	cfg := streamConfig{cache: 256, held: 1024, pool: DefaultPoolSize}
	for _, f := range opts {
		if f != nil {
			f(&cfg)
		}
	}
	d, err := core.Enter(o)
	if err != nil {
		return nil, err
	}
	defer d.Exit()
	q, err := d.Queue(cfg.queue)
	if err != nil {
		return nil, fmt.Errorf("ops.NewStream: %w", err)
	}
	if cfg.cache < 1 || cfg.held < 1 {
		return nil, core.Invalid("ops.NewStream: cache size %d and in-flight bound %d must be at least 1", cfg.cache, cfg.held)
	}
	if cfg.pool < 0 {
		return nil, core.Invalid("ops.NewStream: pool size %d must be at least 0", cfg.pool)
	}
	s := &Stream{owner: o, dev: d, queue: cfg.queue, q: q, maxHeld: cfg.held,
		cache: opCache{dev: d, max: cfg.cache}}
	if cfg.pool > 0 {
		if s.pool, err = newPool(d, uint64(cfg.pool)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

type defaultStreamKey struct{}

// DefaultStream returns the Manager's own stream on queue 0, made at the
// first call; the C API's and Python's eager ops use it. Closing it is an
// error: it lives as long as the Manager.
func DefaultStream(o Owner) (*Stream, error) {
	d, err := core.From(o)
	if err != nil {
		return nil, err
	}
	v, err := d.Attached(defaultStreamKey{}, func() (any, error) {
		s, err := NewStream(o)
		if err == nil {
			s.builtin = true
		}
		return s, err
	})
	if err != nil {
		return nil, err
	}
	return v.(*Stream), nil
}

// Queue returns the stream's logical queue.
func (s *Stream) Queue() int { return s.queue }

// Call queues the op called name over in, with outputs out (nil entries,
// or a short slice: allocated, owned by the caller), and returns the
// outputs once the op is submitted. Errors in the arguments come back at
// once, named after the op, and nothing is submitted then; an allocated
// output is closed again. Reading an output on the host needs Tensor.Wait
// (or Synchronize) first. An input whose last submitted use failed (its
// Tensor.Wait returns the failure) refuses the call with that failure,
// which errors.Is vkflow.ErrFailed and the root cause.
func (s *Stream) Call(name string, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
	if s == nil {
		return nil, core.Invalid("ops: nil Stream")
	}
	if f := dynamicOp(name); f != nil {
		if err := checkDynamicAttrs(name, at); err != nil {
			return nil, err
		}
		return f(s, in, out, at)
	}
	return s.call(name, nil, in, out, at)
}

// call is Call of the registered op name, or, when build is set, of the
// op build prepares (an internal step of a dynamic op; name is its cache
// key's name, one no registered op has).
func (s *Stream) call(name string, build Builder, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
	d, err := core.Enter(s.owner)
	if err != nil {
		return nil, err
	}
	defer d.Exit()
	held, err := holdAll(name, in, out)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, t := range held {
			t.Object().Release()
		}
	}()
	for i, t := range in {
		// An input whose last submitted use failed holds no valid data
		// (package timeline, Failures): the call is refused with that
		// failure, and nothing is queued.
		if err := t.Object().Failure(); err != nil {
			return nil, fmt.Errorf("ops.%s: input %d: %w", name, i, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, core.Closed("ops.Stream")
	}
	s.key, err = appendKey(s.key[:0], name, registryGen(), in, out, &at)
	if err != nil {
		return nil, err
	}
	p := s.cache.get(s.key)
	hit := p != nil
	var outs, made []*tensor.Tensor
	keep := true
	if hit {
		if outs, made, err = s.outputs(p, out); err != nil {
			return nil, fmt.Errorf("ops.%s: %w", name, err)
		}
		err = s.submitRecorded(p, in, outs)
	} else {
		var op *Op
		var perr error
		if build != nil {
			op, perr = build(s.owner, in, out, at)
		} else {
			op, perr = Prepare(s.owner, name, in, out, at)
		}
		if perr != nil {
			return nil, perr
		}
		outs, made = op.Outputs(), append([]*tensor.Tensor(nil), op.made...)
		p, keep = newPrepared(string(s.key), op, in, out)
		if !keep {
			p = &prepared{op: op}
		}
	}
	d.CountOpCall(hit)
	if !hit {
		if err == nil {
			err = s.submit(p, in, outs, false)
		}
		p.unbind()
		p.forget()
		if err == nil && keep {
			s.cache.put(p)
		} else {
			// Not kept: safe to close with the submit in flight.
			_ = p.op.Close()
		}
	}
	if err != nil {
		for _, t := range made {
			_ = t.Close()
		}
		return nil, fmt.Errorf("ops.%s: %w", name, err)
	}
	return outs, nil
}

// holdAll takes a reference on every tensor of a call, or fails with
// ErrClosed naming the first closed one.
func holdAll(name string, in, out []*tensor.Tensor) ([]*tensor.Tensor, error) {
	held := make([]*tensor.Tensor, 0, len(in)+len(out))
	fail := func(err error) ([]*tensor.Tensor, error) {
		for _, t := range held {
			t.Object().Release()
		}
		return nil, err
	}
	for i, t := range in {
		if t == nil {
			return fail(core.Invalid("ops.%s: input %d is nil", name, i))
		}
		if !t.Object().TryAcquire() {
			return fail(core.Closed(fmt.Sprintf("ops.%s: input %d", name, i)))
		}
		held = append(held, t)
	}
	for i, t := range out {
		if t == nil {
			continue
		}
		if !t.Object().TryAcquire() {
			return fail(core.Closed(fmt.Sprintf("ops.%s: output %d", name, i)))
		}
		held = append(held, t)
	}
	return held, nil
}

// arm asks the completion watcher to reclaim the ring once the newest call
// completes, unless it is asked already. Called with mu held.
func (s *Stream) arm() {
	if s.armed || len(s.ring) == 0 {
		return
	}
	v := s.ring[len(s.ring)-1].p.Value()
	if v == 0 {
		return // not submitted yet: the next call arms
	}
	if s.onDone == nil {
		s.onDone = s.completed
	}
	s.armed = s.dev.WhenComplete(s.q, v, s.onDone)
}

// completed runs on the completion watcher once the call the stream armed
// for has completed: it reclaims what completed and looks again later at
// calls queued since (schedule).
func (s *Stream) completed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	if s.closed {
		return
	}
	s.reclaim()
	if len(s.ring) == 0 && !s.idle.set {
		s.startIdle() // to drop the op recordings if no call comes
		return
	}
	s.schedule()
}

// reclaim clears the sequences whose submits completed, oldest first, and
// puts them in the free pool (recordings: settle). A call reclaims right
// after its submit, not before it: the work (settling recordings, giving
// closed outputs' buffers to the pool) then runs while the GPU runs the
// call, not between a synchronous loop's read of the previous call and
// this submit, where the loop waits for it (about half a microsecond on
// lavapipe). The pool gets a buffer back one call later, so such a loop
// cycles through one more output buffer and recording. Called with mu
// held.
func (s *Stream) reclaim() {
	n := 0
	for n < len(s.ring) && s.ring[n].p.Done() {
		if r := s.ring[n].rec; r != nil {
			s.settle(r)
		} else {
			s.recycle(s.ring[n].seq)
		}
		s.ring[n] = inflight{}
		n++
	}
	if n > 0 {
		s.ring = append(s.ring[:0], s.ring[n:]...)
	}
}

// recycle clears seq for reuse, or closes it when it cannot be cleared.
func (s *Stream) recycle(seq *sequence.Sequence) {
	if err := seq.Clear(); err != nil {
		_ = seq.Close()
		return
	}
	s.free = append(s.free, seq)
}

// Synchronize waits until every call queued on the stream so far has
// completed, or ctx ends, and returns the first submit error, if any. It
// also releases what completed calls held (tensors closed meanwhile are
// freed then) and empties the output pool.
func (s *Stream) Synchronize(ctx context.Context) error {
	if s == nil {
		return core.Invalid("ops: nil Stream")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return core.Closed("ops.Stream")
	}
	last, has := s.last, s.has
	s.mu.Unlock()
	if has {
		if err := last.Wait(ctx); err != nil {
			return fmt.Errorf("ops.Stream.Synchronize: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reclaim()
	s.dropRecordings()
	s.trimPool()
	return nil
}

// Close releases the stream's prepared ops and sequences; calls in flight
// complete first on the GPU (nothing waits on the host). Idempotent. The
// Manager's DefaultStream cannot be closed: it goes with the Manager.
func (s *Stream) Close() error {
	if s == nil {
		return nil
	}
	if s.builtin {
		return core.Invalid("ops.Stream.Close: the Manager's default stream lives as long as the Manager")
	}
	return s.close()
}

func (s *Stream) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.idle.stop()
	s.cache.clear()
	if s.pool != nil {
		s.pool.close()
	}
	var errs []error
	for _, f := range s.ring {
		errs = append(errs, f.seq.Close())
	}
	for _, seq := range s.free {
		errs = append(errs, seq.Close())
	}
	s.ring, s.free = nil, nil
	return errors.Join(errs...)
}

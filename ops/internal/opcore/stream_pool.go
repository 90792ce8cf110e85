package opcore

import (
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// DefaultPoolSize bounds a stream's output pool unless WithPoolSize says
// otherwise: 64 MiB of kept buffers (pool.go).
const DefaultPoolSize = 64 << 20

// WithPoolSize bounds the stream's output pool to n bytes of kept buffers
// (default DefaultPoolSize); 0 disables it: every output is a new buffer,
// freed when its tensor is destroyed.
func WithPoolSize(n int64) StreamOption { return func(c *streamConfig) { c.pool = n } }

// outputs is prepared.outputs with the stream's pool: the call's outputs,
// those given and new ones for the nil entries (also returned as made, for
// the caller to close on failure). Called inside the gate, with mu held.
func (s *Stream) outputs(p *prepared, out []*tensor.Tensor) (outs, made []*tensor.Tensor, err error) {
	if s.pool == nil {
		return p.outputs(s.owner, out)
	}
	outs = make([]*tensor.Tensor, len(p.outs))
	for j, spec := range p.outs {
		if t := OutAt(out, j); t != nil {
			outs[j] = t
			continue
		}
		t, err := s.pool.output(spec)
		if err != nil {
			for _, m := range made {
				_ = m.Close()
			}
			return nil, nil, err
		}
		outs[j], made = t, append(made, t)
	}
	return outs, made, nil
}

// TrimPool frees every buffer the stream's output pool keeps (Synchronize
// does it too). Buffers of outputs still alive come back to the pool when
// those tensors are destroyed.
func (s *Stream) TrimPool() error {
	if s == nil {
		return core.Invalid("ops: nil Stream")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return core.Closed("ops.Stream")
	}
	s.reclaim()
	s.dropRecordings()
	s.trimPool()
	return nil
}

// PoolStats returns the counters of the stream's output pool (zero when it
// is disabled).
func (s *Stream) PoolStats() PoolStats {
	if s == nil || s.pool == nil {
		return PoolStats{}
	}
	return s.pool.snapshot()
}

// trimPool empties the pool, inside the device's gate (nothing once the
// Manager is closing: it frees the pool itself). Called with mu held.
func (s *Stream) trimPool() {
	if s.pool == nil {
		return
	}
	d, err := core.Enter(s.owner)
	if err != nil {
		return
	}
	defer d.Exit()
	s.pool.trim()
}

package opcore

import (
	"slices"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// gradPool is the owner Tape.Grad prepares the backward graph's ops with.
// It holds the buffers that are dead: outputs of backward ops that no op
// recorded later reads. An op's new output (Output with no given tensor)
// takes the smallest dead buffer that holds it instead of allocating (the
// buffer itself when its dtype and shape match, else a tensor over its
// first bytes), as the memory planners of MXNet and XLA share buffers
// between values whose lifetimes do not overlap. The graph infers the
// hazards of the shared buffer (the new writer after the last reader), so
// the reuse is ordered on the GPU, across queues too.
type gradPool struct {
	Owner
	free   []*tensor.Tensor                  // dead buffers (their own tensors)
	root   map[*tensor.Tensor]*tensor.Tensor // a view's buffer
	views  []*tensor.Tensor                  // views made here: the tape closes them
	reused uint64
}

// gradPoolOff is a benchmark hook: no output takes a dead buffer (the
// backward graph as it was before the reuse).
var gradPoolOff bool

// take returns a tensor of dtype dt and shape over a dead buffer, or nil
// when none is large enough.
func (p *gradPool) take(dt tensor.Dtype, shape []int) *tensor.Tensor {
	if gradPoolOff {
		return nil
	}
	need := uint64(Numel(shape)) * uint64(dt.Size())
	best := -1
	for i, t := range p.free {
		if t.Bytes() >= need && (best < 0 || t.Bytes() < p.free[best].Bytes()) {
			best = i
		}
	}
	if need == 0 || best < 0 {
		return nil
	}
	buf := p.free[best]
	t := buf
	if buf.Dtype() != dt || !slices.Equal(buf.Shape(), shape) {
		d, err := core.From(p.Owner)
		if err != nil {
			return nil
		}
		v, err := tensor.Adopt(d, buf.Allocation().Prefix(need), dt, shape, false, nil)
		if err != nil {
			return nil // allocate instead
		}
		if p.root == nil {
			p.root = map[*tensor.Tensor]*tensor.Tensor{}
		}
		p.root[v] = buf
		p.views = append(p.views, v)
		t = v
	}
	p.free = slices.Delete(p.free, best, best+1)
	p.reused += need
	return t
}

// put makes the buffer of t available to later outputs: nothing recorded
// after this reads t's value.
func (p *gradPool) put(t *tensor.Tensor) {
	if r, ok := p.root[t]; ok {
		t = r
	}
	if t.Bytes() > 0 {
		p.free = append(p.free, t)
	}
}

// gradLiveness tracks, while Tape.Grad sweeps the recorded ops backward,
// which buffers the backward ops produced and which of them a later step
// can still read: only the cotangents of forward tensors not yet consumed
// (their producer's VJP is still ahead) and the gradients asked for.
// Everything else a step produced is dead once the step is recorded.
type gradLiveness struct {
	pool     *gradPool
	produced map[*tensor.Tensor]bool // outputs the backward ops allocated
	cands    []*tensor.Tensor        // produced, not in the pool
	consumed map[*tensor.Tensor]bool // forward tensors whose VJP is recorded
	wrt      map[*tensor.Tensor]bool
}

// gradPoolIgnoresLiveness is a test hook (the mutation check): every
// produced buffer goes to the pool at each step, live or not.
var gradPoolIgnoresLiveness bool

// recorded notes the outputs of a backward op just recorded: made are the
// ones it allocated, outs all of them (a reused buffer is produced too).
func (l *gradLiveness) recorded(made, outs []*tensor.Tensor) {
	for _, m := range made {
		l.produced[m] = true
	}
	for _, o := range outs {
		if l.produced[o] {
			l.cands = append(l.cands, o)
		}
	}
}

// release pools the produced buffers no later step reads, given the
// cotangents held now.
func (l *gradLiveness) release(cot map[*tensor.Tensor]*tensor.Tensor) {
	needed := map[*tensor.Tensor]bool{}
	if !gradPoolIgnoresLiveness {
		for x, g := range cot {
			if !l.consumed[x] || l.wrt[x] {
				needed[g] = true
			}
		}
	}
	kept := l.cands[:0]
	// A buffer can be a candidate twice (an op wrote a given output that a
	// backward op produced earlier): pool it once, or two later outputs
	// would share it.
	seen := map[*tensor.Tensor]bool{}
	for _, c := range l.cands {
		switch {
		case seen[c]:
		case needed[c]:
			kept = append(kept, c)
		default:
			l.pool.put(c)
		}
		seen[c] = true
	}
	l.cands = kept
}

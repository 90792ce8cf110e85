package main

import (
	"context"
	"fmt"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/glsl"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// The kernels, over uint32 elements so that every value is exact.
const (
	hashGLSL = `
uint hash(uint i) {
	uint h = i * 0x9E3779B1u;
	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	return h;
}
`
	// step 0: x[i] = hash(i)
	produceGLSL = `#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer X { uint x[]; };
layout(push_constant) uniform P { uint n; };
` + hashGLSL + `
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < n) x[i] = hash(i);
}
`
	// step s: x[i] = x[i]*a + b, in place
	stepGLSL = `#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform P { uint n; uint a; uint b; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < n) x[i] = x[i] * a + b;
}
`
	// A read of all of x (uvec4 x4[] over the same bytes): invocation j
	// sums x[i] ^ i over its own 64 vec4s (16 bytes each; on lavapipe a
	// storage-buffer load costs per lane and per load, so a lane reads
	// whole vec4s in a tight loop).
	checksumGLSL = `#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { uvec4 x4[]; };
layout(set = 0, binding = 1) writeonly buffer S { uint s[]; };
layout(push_constant) uniform P { uint n4; };
void main() {
	uint j = gl_GlobalInvocationID.x;
	uint start = j * 64u;
	uint end = min(start + 64u, n4);
	uvec4 idx = uvec4(0u, 1u, 2u, 3u) + 4u * start;
	uvec4 acc = uvec4(0u);
	for (uint k = start; k < end; k++) {
		acc += x4[k] ^ idx;
		idx += 4u;
	}
	s[j] = acc.x + acc.y + acc.z + acc.w;
}
`
)

// checksumLanes is how many invocations (and partial sums) the checksum
// kernel has for n uint32 elements (n a multiple of 4).
func checksumLanes(n int) int { return (n/4 + 64*256 - 1) / (64 * 256) * 256 }

// The CPU's side of the kernels.

func hash(i uint32) uint32 {
	h := i * 0x9E3779B1
	h ^= h >> 16
	h *= 0x85EBCA6B
	h ^= h >> 13
	return h
}

// stepConsts are step s's a (odd) and b.
func stepConsts(s int) (a, b uint32) { return uint32(2*s + 3), uint32(s)*0x9E3779B9 + 7 }

// want is element i after step s.
func want(i uint32, s int) uint32 {
	v := hash(i)
	for k := 1; k <= s; k++ {
		a, b := stepConsts(k)
		v = v*a + b
	}
	return v
}

func wantChecksum(n int) uint32 {
	var sum uint32
	for i := range uint32(n) {
		sum += hash(i) ^ i
	}
	return sum
}

// side is one process's view: the shared tensor (exported by the parent,
// imported by the child) and its kernels.
type side struct {
	mgr    *vkflow.Manager
	cfg    config
	role   int // 0: the parent (step 0 and the even steps); 1: the child (odd steps)
	n      int
	x      *tensor.Tensor
	step   *algorithm.Algorithm
	shared *timeline.Timeline // the shared timeline, nil under host relay
	seqs   []*sequence.Sequence
	ctx    context.Context
	cancel context.CancelFunc
}

func newSide(mgr *vkflow.Manager, cfg config, role int, x *tensor.Tensor) (*side, error) {
	s := &side{mgr: mgr, cfg: cfg, role: role, n: int(cfg.Bytes / 4), x: x}
	s.ctx, s.cancel = context.WithTimeout(context.Background(), timeout)
	var err error
	s.step, err = s.kernel(stepGLSL, []*tensor.Tensor{x}, groups(s.n))
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func groups(n int) uint32 { return uint32((n + 255) / 256) }

func (s *side) kernel(src string, ts []*tensor.Tensor, groups uint32) (*algorithm.Algorithm, error) {
	code, err := glsl.Compile(src)
	if err != nil {
		return nil, err
	}
	return algorithm.New(s.mgr, code, ts, algorithm.Workgroups(groups, 1, 1))
}

func (s *side) sequence() (*sequence.Sequence, error) {
	seq, err := sequence.New(s.mgr, 0)
	if err == nil {
		s.seqs = append(s.seqs, seq)
	}
	return seq, err
}

// close releases what the side created (the Manager would too).
func (s *side) close() {
	for _, q := range s.seqs {
		q.Close()
	}
	if s.step != nil {
		s.step.Close()
	}
	if s.shared != nil {
		s.shared.Close()
	}
	s.x.Close()
	s.cancel()
}

func newSharedTimeline(mgr *vkflow.Manager) (*timeline.Timeline, error) {
	return timeline.New(mgr, 0, timeline.Exportable())
}

// produce computes step 0 on the GPU and waits for it (with a shared
// timeline, its submit signals value 1 too).
func (s *side) produce() error {
	k, err := s.kernel(produceGLSL, []*tensor.Tensor{s.x}, groups(s.n))
	if err != nil {
		return err
	}
	defer k.Close()
	seq, err := s.sequence()
	if err != nil {
		return err
	}
	var opts []sequence.SubmitOption
	if s.shared != nil {
		opts = append(opts, sequence.Signal(s.shared, 1))
	}
	return seq.Dispatch(k, uint32(s.n)).SyncLocal(s.x).Submit(s.ctx, opts...).Wait(s.ctx)
}

// checksum reads all of x on the GPU and returns the checksum and the time
// of the submit and wait (the pipeline is built before).
func (s *side) checksum() (uint32, time.Duration, error) {
	lanes := checksumLanes(s.n)
	sums, err := tensor.New(s.mgr, tensor.Uint32, []int{lanes})
	if err != nil {
		return 0, 0, err
	}
	defer sums.Close()
	k, err := s.kernel(checksumGLSL, []*tensor.Tensor{s.x, sums}, uint32(lanes/256))
	if err != nil {
		return 0, 0, err
	}
	defer k.Close()
	seq, err := s.sequence()
	if err != nil {
		return 0, 0, err
	}
	seq.Dispatch(k, uint32(s.n/4)).SyncLocal(sums)
	start := time.Now()
	if err := seq.Eval(s.ctx); err != nil {
		return 0, 0, err
	}
	took := time.Since(start)
	parts, err := sums.Uint32s()
	if err != nil {
		return 0, 0, err
	}
	var sum uint32
	for _, p := range parts {
		sum += p
	}
	return sum, took, nil
}

// check compares every element of x, read through this process's own
// tensor, with the values after step.
func (s *side) check(step int) error {
	xs, err := s.x.Uint32s()
	if err != nil {
		return err
	}
	for i, v := range xs {
		if w := want(uint32(i), step); v != w {
			return fmt.Errorf("%s: after step %d, element %d = %#x, want %#x", who(), step, i, v, w)
		}
	}
	return nil
}

// steps runs this side's steps of 1..cfg.Steps in place, in turns with the
// other process, then checks the final values through its own tensor.
func (s *side) steps(l *link) error {
	var peer *timeline.Timeline // host relay: the other side's progress, signalled from the host
	if s.shared == nil {
		var err error
		if peer, err = timeline.New(s.mgr, 0); err != nil {
			return err
		}
		defer peer.Close()
	}
	var last sequence.Pending
	submitted := false
	for st := 1; st <= s.cfg.Steps; st++ {
		if st%2 != s.role {
			continue
		}
		a, b := stepConsts(st)
		seq, err := s.sequence()
		if err != nil {
			return err
		}
		seq.Dispatch(s.step, uint32(s.n), a, b).SyncLocal(s.x)
		if s.shared != nil {
			// Value v on the shared timeline: step v-1 is done. Every
			// step is submitted at once; the GPUs order them.
			last, submitted = seq.Submit(s.ctx, sequence.Wait(s.shared, uint64(st)), sequence.Signal(s.shared, uint64(st+1))), true
			if err := last.Err(); err != nil {
				return err
			}
			continue
		}
		// Host relay: submitted now, held until the host signals peer.
		p := seq.Submit(s.ctx, sequence.Wait(peer, uint64(st)))
		if err := p.Err(); err != nil {
			return err
		}
		if err := s.awaitPeer(l, st-1); err != nil {
			return err
		}
		if err := peer.Signal(uint64(st)); err != nil {
			return err
		}
		if err := p.Wait(s.ctx); err != nil {
			return err
		}
		if err := l.send(msg{Kind: "done", Step: st}); err != nil {
			return err
		}
	}
	final := s.cfg.Steps
	switch {
	case s.shared != nil:
		if err := s.shared.Wait(s.ctx, uint64(final+1)); err != nil {
			return err
		}
		if submitted {
			if err := last.Wait(s.ctx); err != nil {
				return err
			}
		}
		return s.check(final)
	case final > 0 && final%2 != s.role:
		return s.awaitPeer(l, final) // the last step was the other side's
	default:
		return s.check(final)
	}
}

// awaitPeer waits for the other side's message that step is done, and
// checks the memory through this process's tensor.
func (s *side) awaitPeer(l *link, step int) error {
	if step == 0 {
		return nil // the child checked step 0 on import; the parent computed it
	}
	m, err := l.recv("done")
	if err != nil {
		return err
	}
	if m.Step != step {
		return fmt.Errorf("got done for step %d, want %d", m.Step, step)
	}
	return s.check(step)
}

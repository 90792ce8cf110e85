package sequence

import (
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/record"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// Pipeline stages and access masks for Barrier (Vulkan synchronization 1).
const (
	StageTop      = vk.StageTopOfPipe
	StageCompute  = vk.StageComputeShader
	StageTransfer = vk.StageTransfer
	StageHost     = vk.StageHost
	StageBottom   = vk.StageBottomOfPipe
	StageAll      = vk.StageAllCommands

	AccessShaderRead    = vk.AccessShaderRead
	AccessShaderWrite   = vk.AccessShaderWrite
	AccessTransferRead  = vk.AccessTransferRead
	AccessTransferWrite = vk.AccessTransferWrite
	AccessHostRead      = vk.AccessHostRead
	AccessHostWrite     = vk.AccessHostWrite
	AccessMemoryRead    = vk.AccessMemoryRead
	AccessMemoryWrite   = vk.AccessMemoryWrite
)

// Barrier is an explicit global memory barrier.
type Barrier struct {
	SrcStages, SrcAccess uint32
	DstStages, DstAccess uint32
}

// Region copies Len elements from element Src of the source to element Dst
// of the destination.
type Region struct {
	Src, Dst, Len int
}

type opKind uint8

const (
	opSyncDevice opKind = iota
	opSyncLocal
	opCopy
	opFill
	opBarrier
	opDispatch
)

var opNames = [...]string{"SyncDevice", "SyncLocal", "Copy", "Fill", "Barrier", "Dispatch"}

type op struct {
	kind    opKind
	tensors []*tensor.Tensor // for a dispatch: the algorithm's bindings when recorded
	groups  [3]uint32
	algo    *algorithm.Algorithm
	push    []byte
	regions []vk.CopyRegion
	fill    record.FillPlan
	fillSrc *core.Allocation // the pattern of fill.Tail
	barrier Barrier
}

// SyncDevice declares that the host wrote ts before this submit. Queue
// submission already makes such writes visible to the GPU, so it records no
// command; it checks that the tensors have host access.
func (s *Sequence) SyncDevice(ts ...*tensor.Tensor) *Sequence {
	return s.record("SyncDevice", ts, nil, func() (op, error) {
		for i, t := range ts {
			if t.Memory() == tensor.Storage {
				return op{}, core.Invalid("SyncDevice: tensor %d is Storage memory, which the host cannot write", i)
			}
		}
		return op{kind: opSyncDevice, tensors: append([]*tensor.Tensor(nil), ts...)}, nil
	})
}

// SyncLocal makes the GPU's writes to ts visible to the host once the
// submit completes. For memory that is not host-mapped the accessors copy
// through the staging ring and no command is needed.
func (s *Sequence) SyncLocal(ts ...*tensor.Tensor) *Sequence {
	return s.record("SyncLocal", ts, nil, func() (op, error) {
		for i, t := range ts {
			if t.Memory() == tensor.Storage {
				return op{}, core.Invalid("SyncLocal: tensor %d is Storage memory, which the host cannot read", i)
			}
		}
		return op{kind: opSyncLocal, tensors: append([]*tensor.Tensor(nil), ts...)}, nil
	})
}

// Copy copies src into dst. With no regions it copies the whole tensor and
// the lengths must match; regions are in elements. The dtypes must match.
// As Vulkan requires, no destination region may overlap a source region or
// another destination region in memory, also when src and dst are views of
// one buffer (ErrInvalid names the two regions).
func (s *Sequence) Copy(src, dst *tensor.Tensor, regions ...Region) *Sequence {
	return s.record("Copy", []*tensor.Tensor{src, dst}, nil, func() (op, error) {
		rs, err := CopyRegions(src, dst, regions)
		if err != nil {
			return op{}, err
		}
		return op{kind: opCopy, tensors: []*tensor.Tensor{src, dst}, regions: rs}, nil
	})
}

// CopyRegions checks a copy of src into dst with the given regions (none:
// the whole tensors) as Copy does, and returns the regions in bytes.
// Package graph records copies with it.
func CopyRegions(src, dst *tensor.Tensor, regions []Region) ([]vk.CopyRegion, error) {
	if src.Dtype() != dst.Dtype() {
		return nil, core.Invalid("Copy: mismatched dtypes %v and %v", src.Dtype(), dst.Dtype())
	}
	if len(regions) == 0 {
		if src.Len() != dst.Len() {
			return nil, core.Invalid("Copy: size mismatch: %d elements into %d (give regions for a partial copy)", src.Len(), dst.Len())
		}
		if src.Len() == 0 {
			return nil, nil // two empty tensors: nothing to copy
		}
		regions = []Region{{Len: src.Len()}}
	}
	if dst.ReadOnly() {
		return nil, core.Invalid("Copy: the destination is read-only")
	}
	es := uint64(src.Dtype().Size())
	rs := make([]vk.CopyRegion, len(regions))
	for i, r := range regions {
		if r.Len <= 0 || r.Src < 0 || r.Dst < 0 || r.Src > src.Len()-r.Len || r.Dst > dst.Len()-r.Len {
			return nil, core.Invalid("Copy: region %d %+v out of bounds (source %d, destination %d elements)", i, r, src.Len(), dst.Len())
		}
		rs[i] = vk.CopyRegion{SrcOffset: uint64(r.Src) * es, DstOffset: uint64(r.Dst) * es, Size: uint64(r.Len) * es}
	}
	if c, bad := copyConflict(placeOf(src), placeOf(dst), rs); bad {
		other := "destination"
		if c.dstSrc {
			other = "source"
		}
		return nil, core.Invalid("Copy: region %d's destination overlaps region %d's %s in memory (regions %+v and %+v; Vulkan forbids it)",
			c.I, c.J, other, regions[c.I], regions[c.J])
	}
	return rs, nil
}

// Fill sets every element of t to v, whose Go type must match t's dtype
// (tensor.Half for float16). 8-byte values must have equal 32-bit halves
// (zero, for example), because the GPU fills in 32-bit words. It writes
// exactly the tensor's bytes: vkCmdFillBuffer writes whole words, so when
// the size is not a multiple of 4 and the tensor has no padding of its own
// (an import), its last 1-3 bytes are copied from a small host-written
// buffer holding the pattern.
func (s *Sequence) Fill(t *tensor.Tensor, v any) *Sequence {
	return s.record("Fill", []*tensor.Tensor{t}, nil, func() (op, error) {
		if t.ReadOnly() {
			return op{}, core.Invalid("Fill: the tensor is read-only")
		}
		plan, err := record.PlanFill(t, v)
		if err != nil {
			return op{}, err
		}
		o := op{kind: opFill, tensors: []*tensor.Tensor{t}, fill: plan}
		if plan.Tail {
			if o.fillSrc, err = s.fillPattern(plan.Word); err != nil {
				return op{}, err
			}
		}
		return o, nil
	})
}

// fillPattern returns a host-written buffer holding word, one per distinct
// word, kept until the sequence is cleared or destroyed (the GPU only
// reads it).
// Called with mu held.
func (s *Sequence) fillPattern(word uint32) (*core.Allocation, error) {
	if a := s.patterns[word]; a != nil {
		return a, nil
	}
	a, err := record.Pattern(s.dev, word)
	if err != nil {
		return nil, err
	}
	if s.patterns == nil {
		s.patterns = map[uint32]*core.Allocation{}
	}
	s.patterns[word] = a
	return a, nil
}

// Barrier records an explicit global memory barrier, in addition to the
// inferred ones.
func (s *Sequence) Barrier(b Barrier) *Sequence {
	return s.record("Barrier", nil, nil, func() (op, error) {
		if b.SrcStages == 0 || b.DstStages == 0 {
			return op{}, core.Invalid("Barrier: source and destination stages must be non-zero")
		}
		return op{kind: opBarrier, barrier: b}, nil
	})
}

// Dispatch records the algorithm with the tensors bound to it now, and push
// constants given as typed values (see algorithm.Push), whose encoded size
// must equal the shader's push constant block. A later algorithm.Bind does
// not change this dispatch until Rerecord.
func (s *Sequence) Dispatch(a *algorithm.Algorithm, push ...any) *Sequence {
	if a == nil {
		return s.record("Dispatch", nil, nil, func() (op, error) {
			return op{}, core.Invalid("Dispatch: nil algorithm")
		})
	}
	return s.record("Dispatch", nil, a, func() (op, error) {
		data, err := algorithm.Push(push...)
		if err != nil {
			return op{}, err
		}
		if len(data) != a.PushSize() {
			return op{}, core.Invalid("Dispatch: push constants are %d bytes, the pipeline's are %d", len(data), a.PushSize())
		}
		ts, groups, err := a.Snapshot()
		if err != nil {
			return op{}, err
		}
		for i, t := range ts {
			if t.ReadOnly() && a.Access(i) != algorithm.ReadOnly {
				for _, t := range ts {
					t.Object().Release()
				}
				return op{}, core.Invalid("Dispatch: binding %d writes a read-only tensor", i)
			}
		}
		return op{kind: opDispatch, algo: a, push: data, tensors: ts, groups: groups}, nil
	})
}

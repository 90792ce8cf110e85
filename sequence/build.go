package sequence

import (
	"fmt"
	"time"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/record"
	"github.com/vkflow/vkflow/vk"
)

const writeAccess = record.WriteAccess

type access struct {
	wStage, wAccess     uint32 // last write in this build, 0 if none
	visStage, visAccess uint32 // where that write is already visible
	rStages             uint32 // stages that read since the last write
}

// build records the command buffer from the ops.
func (s *Sequence) build() error {
	if s.dev.Tracing() {
		defer s.dev.Span("sequence record", time.Now(), map[string]any{"ops": len(s.ops)})
	}
	s.releaseBuild()
	if err := vk.ResetCommandBuffer(s.cmd); err != nil {
		return err
	}
	if err := vk.BeginCommandBuffer(s.cmd, vk.CommandBufferSimultaneousUse); err != nil {
		return err
	}
	if s.timestamps {
		if err := s.ensureQueries(len(s.ops) + 1); err != nil {
			return err
		}
		vk.CmdResetQueryPool(s.cmd, s.qpool, 0, uint32(len(s.ops)+1))
	}
	// What orders this command buffer after earlier submits: its leading
	// barrier, which carries what a submit needs after a previous submit
	// of itself, and, when a submit needs more (another command buffer
	// touched its buffers), that submit's prelude, from s.hz.Uses (see
	// core.Lead and core.Hazards).
	s.hz.Uses = s.hz.Uses[:0]
	clear(s.useIdx)
	for i := range s.ops {
		for _, u := range s.opUses(&s.ops[i]) {
			s.summarize(u)
		}
	}
	var src, dst uint32
	src, dst, s.barriers = core.Lead(s.hz.Uses, s.barriers)
	if len(s.barriers) > 0 {
		vk.CmdPipelineBarrier(s.cmd, src, dst, 0, 0, s.barriers)
	}
	if s.timestamps {
		vk.CmdWriteTimestamp(s.cmd, vk.StageTopOfPipe, s.qpool, 0)
	}
	clear(s.state)
	s.firstStage = vk.StageAllCommands
	if len(s.ops) > 0 {
		switch s.ops[0].kind {
		case opDispatch:
			s.firstStage = vk.StageComputeShader
		case opCopy, opFill:
			s.firstStage = vk.StageTransfer
		}
	}
	for i := range s.ops {
		if err := s.recordOp(&s.ops[i]); err != nil {
			return err
		}
		if s.timestamps {
			vk.CmdWriteTimestamp(s.cmd, vk.StageBottomOfPipe, s.qpool, uint32(i+1))
		}
	}
	return vk.EndCommandBuffer(s.cmd)
}

func (s *Sequence) ensureQueries(n int) error {
	if s.qpool != 0 && s.nQuery >= n {
		return nil
	}
	if s.qpool != 0 {
		s.dev.VK.DestroyQueryPool(s.qpool)
		s.qpool = 0
	}
	p, err := s.dev.VK.CreateTimestampPool(uint32(n))
	if err != nil {
		return err
	}
	s.qpool, s.nQuery = p, n
	return nil
}

// use is one buffer access by an op.
type use struct {
	alloc  *core.Allocation
	stage  uint32
	access uint32
}

// barrierFor records the barrier that orders uses after earlier accesses in
// this build, then updates the tracked state.
func (s *Sequence) barrierFor(uses []use) {
	s.barriers = s.barriers[:0]
	var src, dst uint32
	for _, u := range uses {
		st := s.state[u.alloc.Buffer]
		if st == nil {
			st = &access{}
			s.state[u.alloc.Buffer] = st
		}
		write := u.access&writeAccess != 0
		readBits := u.access &^ writeAccess
		var bsrc, bsrcAccess uint32
		need := false
		if st.wStage != 0 && (write || st.visStage&u.stage != u.stage || st.visAccess&readBits != readBits) {
			bsrc |= st.wStage
			bsrcAccess = st.wAccess
			need = true
		}
		if write && st.rStages != 0 {
			bsrc |= st.rStages
			need = true
		}
		if st.wStage == 0 && u.stage == vk.StageHost {
			// Writes from earlier submits reach the host only through a
			// barrier to the host stage.
			bsrc |= vk.StageAllCommands
			bsrcAccess |= vk.AccessMemoryWrite
			need = true
		}
		if need {
			s.barriers = append(s.barriers, vk.BufferBarrier{
				Buffer: u.alloc.Buffer, Size: vk.WholeSize,
				SrcAccess: bsrcAccess, DstAccess: u.access,
				SrcFamily: vk.QueueFamilyIgnored, DstFamily: vk.QueueFamilyIgnored,
			})
			src |= bsrc
			dst |= u.stage
		}
		if write {
			*st = access{wStage: u.stage, wAccess: u.access & writeAccess}
		} else {
			st.rStages |= u.stage
			if need {
				st.visStage |= u.stage
				st.visAccess |= readBits
			}
		}
	}
	if len(s.barriers) > 0 && core.InferBarriers {
		vk.CmdPipelineBarrier(s.cmd, src, dst, 0, 0, s.barriers)
	}
}

// summarize adds u to the command buffer's per-buffer uses, from which its
// leading barrier and each submit's prelude order it after earlier submits.
func (s *Sequence) summarize(u use) {
	if u.stage == vk.StageHost {
		// A host read happens after the submit completes; the barrier to
		// the host stage is in the command buffer (barrierFor).
		return
	}
	i, ok := s.useIdx[u.alloc.Buffer]
	if !ok {
		i = len(s.hz.Uses)
		s.useIdx[u.alloc.Buffer] = i
		// A tensor's allocation is its whole VkBuffer, or for a view of a
		// foreign buffer the range [0, Size) that descriptors bind; a
		// buffer used through several allocations is one entry.
		s.hz.Uses = append(s.hz.Uses, core.BufferUse{Buffer: u.alloc.Buffer})
	}
	b := &s.hz.Uses[i]
	b.Size = max(b.Size, u.alloc.Size)
	if w := u.access & writeAccess; w != 0 {
		b.WStages |= u.stage
		b.WAccess |= w
	}
	if r := u.access &^ writeAccess; r != 0 {
		b.RStages |= u.stage
		b.RAccess |= r
	}
}

// merge folds uses of the same buffer within one op together (a tensor
// and a view of its buffer too).
func merge(uses []use) []use {
	out := uses[:0]
	for _, u := range uses {
		found := false
		for i := range out {
			if out[i].alloc.Buffer == u.alloc.Buffer {
				out[i].stage |= u.stage
				out[i].access |= u.access
				found = true
				break
			}
		}
		if !found {
			out = append(out, u)
		}
	}
	return out
}

// opUses returns the buffer accesses of o, merged by buffer (nil for an op
// that touches no buffer).
func (s *Sequence) opUses(o *op) []use {
	switch o.kind {
	case opSyncLocal:
		var uses []use
		for _, t := range o.tensors {
			if t.Mapped() {
				uses = append(uses, use{t.Allocation(), vk.StageHost, vk.AccessHostRead})
			}
		}
		return merge(uses)
	case opCopy:
		src, dst := o.tensors[0].Allocation(), o.tensors[1].Allocation()
		return merge([]use{{src, vk.StageTransfer, vk.AccessTransferRead}, {dst, vk.StageTransfer, vk.AccessTransferWrite}})
	case opFill:
		// Only the tensor's range: a view's buffer may be larger, and an
		// import's neighbouring bytes belong to the producer.
		return []use{{o.tensors[0].Allocation(), vk.StageTransfer, vk.AccessTransferWrite}}
	case opDispatch:
		uses := make([]use, 0, len(o.tensors))
		for i, t := range o.tensors {
			uses = append(uses, use{t.Allocation(), vk.StageComputeShader, record.BindingAccess(o.algo, i)})
		}
		return merge(uses)
	}
	// opSyncDevice: host writes made before the submit are visible to it.
	return nil
}

func (s *Sequence) recordOp(o *op) error {
	switch o.kind {
	case opSyncLocal:
		s.barrierFor(s.opUses(o))
	case opCopy:
		s.barrierFor(s.opUses(o))
		vk.CmdCopyBuffer(s.cmd, o.tensors[0].Allocation().Buffer, o.tensors[1].Allocation().Buffer, o.regions)
	case opFill:
		s.barrierFor(s.opUses(o))
		record.Fill(s.cmd, o.tensors[0], o.fill, o.fillSrc)
	case opBarrier:
		b := o.barrier
		vk.CmdPipelineBarrier(s.cmd, b.SrcStages, b.DstStages, b.SrcAccess, b.DstAccess, nil)
	case opDispatch:
		return s.recordDispatch(o)
	}
	return nil
}

func (s *Sequence) recordDispatch(o *op) error {
	set, err := o.algo.TakeBinding(o.tensors)
	if err != nil {
		return err
	}
	s.bindings = append(s.bindings, builtBinding{algo: o.algo, set: set})
	s.barrierFor(s.opUses(o))
	return record.Dispatch(s.dev, s.cmd, o.algo, set, o.push, o.groups, nil)
}

// Timestamps returns the GPU time each operation took in the last submit,
// in recording order. The sequence needs WithTimestamps and a completed
// submit.
func (s *Sequence) Timestamps() ([]time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.timestamps {
		return nil, core.Invalid("Timestamps: sequence created without WithTimestamps")
	}
	if s.obj.Closed() {
		return nil, core.Closed("sequence")
	}
	if s.last == 0 || !s.q.Done(s.last) {
		return nil, fmt.Errorf("sequence: Timestamps: %w", core.ErrPending)
	}
	if err := s.dev.Enter(); err != nil {
		return nil, err
	}
	defer s.dev.Exit()
	raw := make([]uint64, len(s.ops)+1)
	if err := s.dev.VK.QueryResults64(s.qpool, 0, raw); err != nil {
		return nil, err
	}
	period := float64(s.dev.Info.Limits.TimestampPeriod)
	out := make([]time.Duration, len(s.ops))
	for i := range out {
		out[i] = time.Duration(float64(raw[i+1]-raw[i]) * period)
	}
	return out, nil
}

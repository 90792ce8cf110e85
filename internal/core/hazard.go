package core

import (
	"sync/atomic"

	"github.com/vkflow/vkflow/vk"
)

// Cross-submit hazard tracking.
//
// A command buffer orders the accesses inside it with its own barriers. What
// it cannot know when it is recorded is what ran before it on the queue: it
// is recorded once and submitted many times, in any order with other
// command buffers. So each physical queue remembers, per VkBuffer, the last
// write and the reads since, as submitted (the queue's hazard state), and
// every tracked submit gets, in the same vkQueueSubmit batch, a small
// prelude command buffer holding exactly the buffer barriers its first
// accesses need: read after write, write after read, write after write.
// Read after read needs none, nor does a buffer no earlier submit on the
// queue touched. A command buffer may begin with a leading barrier (Lead)
// holding what a submit needs after a previous submit of itself; a submit
// whose barriers that one covers goes without a prelude, so that the
// common case, a command buffer submitted again, is one command buffer in
// the batch.
//
// The rules the other submitters follow:
//   - Cross-queue order comes from timeline semaphore waits, which are full
//     memory dependencies, so the state is per physical queue. A buffer
//     last written on another queue needs no barrier here if the submit
//     waits (directly or through a chain) for that write's timeline value:
//     the CUDA-streams rule. Without such a wait the two queues race, as
//     two CUDA streams would.
//   - Host writes made before a submit are visible to it (vkQueueSubmit's
//     host-write guarantee); host reads after a wait need a barrier to the
//     host stage inside the reading command buffer (sequence.SyncLocal).
//   - Internal submits that do not report their accesses here (the staging
//     ring's transfers) begin with a global barrier that orders them after
//     all earlier work and end with one that makes their writes available
//     and visible to all later commands, so later tracked submits need no
//     barrier for them.
//   - A freed buffer's memory may be bound to a new buffer: the next tracked
//     submit on every queue that had state for it carries a global barrier.

// BufferUse summarizes one command buffer's accesses to one buffer range:
// the stages and access masks of its reads and of its writes. The
// prelude's barriers cover the whole buffer (see prelude).
//
// LeadStages and LeadAccess, set by Lead, say what the command buffer's
// own leading barrier orders its accesses to the buffer after: earlier
// accesses in those stages, writes with those access bits (0: it has no
// leading barrier for the buffer).
type BufferUse struct {
	Buffer                 vk.Buffer
	Offset, Size           uint64
	RStages, RAccess       uint32
	WStages, WAccess       uint32
	LeadStages, LeadAccess uint32
}

// Lead computes the leading barrier of a command buffer whose buffer uses
// are uses: the barriers a submit of it needs after a previous submit of
// the same command buffer (write after write and write after read on
// every buffer it writes; a buffer it only reads needs none), the barrier
// the prelude would otherwise carry on every resubmit. It sets each use's
// LeadStages and LeadAccess and returns the barrier's stage masks and its
// buffer barriers (appended to bars[:0]; none when the command buffer
// writes nothing or barriers are not inferred). The caller records the
// barrier before the command buffer's first command; prelude then leaves
// out a prelude whose barriers the leading barrier covers, so that a
// resubmitted command buffer goes to the driver alone (on lavapipe a
// second command buffer in the batch costs about 5 µs per submit).
//
// Against a buffer that no earlier submit touched the leading barrier is
// more than needed; it only orders the command buffer after earlier work
// in its own stages, which a resubmit needs anyway.
func Lead(uses []BufferUse, bars []vk.BufferBarrier) (src, dst uint32, out []vk.BufferBarrier) {
	out = bars[:0]
	for i := range uses {
		u := &uses[i]
		u.LeadStages, u.LeadAccess = 0, 0
		if u.WStages == 0 || !InferBarriers {
			continue
		}
		u.LeadStages, u.LeadAccess = u.WStages|u.RStages, u.WAccess
		src |= u.LeadStages
		dst |= u.WStages | u.RStages
		out = append(out, vk.BufferBarrier{
			Buffer: u.Buffer, Offset: 0, Size: vk.WholeSize,
			SrcAccess: u.WAccess, DstAccess: u.RAccess | u.WAccess,
			SrcFamily: vk.QueueFamilyIgnored, DstFamily: vk.QueueFamilyIgnored,
		})
	}
	return src, dst, out
}

// hazardState is what a queue remembers of one buffer's submitted uses.
type hazardState struct {
	wStages, wAccess     uint32 // writes of the last submit that wrote it
	rStages              uint32 // stages that read it since (or in) that submit
	visStages, visAccess uint32 // where the last write was made visible since
}

// Hazards is the cross-submit tracking of one recorded command buffer: its
// buffer uses, set when it is recorded, and the prelude command buffers
// submitted before it. Everything but Uses is guarded by the lock of the
// queue it is submitted to; it is used with one queue only.
type Hazards struct {
	// Uses lists the command buffer's buffer accesses; the owner sets it
	// when no submit of the command buffer is pending or held.
	Uses []BufferUse

	dev      *Device
	family   uint32
	pool     vk.CommandPool
	preludes []*prelude
	bars     []vk.BufferBarrier // scratch
	barred   []bool             // scratch: which Uses got a barrier

	// counters for tests
	barrierSubmits atomic.Int64
	records        atomic.Int64
	preludeSubmits atomic.Int64
}

type prelude struct {
	cmd      vk.CommandBuffer
	global   bool
	src, dst uint32
	bars     []vk.BufferBarrier
	last     uint64 // queue value of its last submit
}

// NewHazards returns the tracking for command buffers of queue q.
func (d *Device) NewHazards(q *Queue) *Hazards {
	return &Hazards{dev: d, family: q.Family}
}

// Stats returns how many submits carried a prelude with barriers and how
// many preludes were recorded (re-recording counts), for tests.
func (h *Hazards) Stats() (barrierSubmits, records int64) {
	return h.barrierSubmits.Load(), h.records.Load()
}

// PreludeSubmits returns how many submits carried a prelude command
// buffer, for tests.
func (h *Hazards) PreludeSubmits() int64 { return h.preludeSubmits.Load() }

// Destroy frees the preludes. The caller guarantees none is pending.
func (h *Hazards) Destroy() {
	if h == nil || h.pool == 0 {
		return
	}
	h.dev.VK.DestroyCommandPool(h.pool)
	h.pool, h.preludes = 0, nil
}

// prelude returns the command buffer to submit before h's as queue value
// v (nil when no barrier is needed). Called with q.mu held.
func (h *Hazards) prelude(q *Queue, v uint64) (vk.CommandBuffer, error) {
	if h == nil || len(h.Uses) == 0 {
		return nil, nil
	}
	global := q.reused
	h.bars = h.bars[:0]
	h.barred = h.barred[:0]
	var src, dst uint32
	lead := true // every barrier needed is one the leading barrier has
	for _, u := range h.Uses {
		need := false
		if st := q.hazards[u.Buffer]; st != nil {
			stages, access := u.RStages|u.WStages, u.RAccess|u.WAccess
			var bsrc, bsrcAccess uint32
			if st.wStages != 0 && (u.WStages != 0 || st.visStages&stages != stages || st.visAccess&access != access) {
				bsrc, bsrcAccess = st.wStages, st.wAccess
			}
			if u.WStages != 0 {
				bsrc |= st.rStages
			}
			if bsrc != 0 {
				need = true
				src |= bsrc
				dst |= stages
				if bsrc&^u.LeadStages != 0 || bsrcAccess&^u.LeadAccess != 0 {
					lead = false
				}
				// The state is per buffer, not per range: a barrier over
				// u's range only would leave a write elsewhere in the
				// buffer (another view's) unavailable while the state
				// says it is visible. So it covers the whole buffer.
				h.bars = append(h.bars, vk.BufferBarrier{
					Buffer: u.Buffer, Offset: 0, Size: vk.WholeSize,
					SrcAccess: bsrcAccess, DstAccess: access,
					SrcFamily: vk.QueueFamilyIgnored, DstFamily: vk.QueueFamilyIgnored,
				})
			}
		}
		h.barred = append(h.barred, need || global)
	}
	if !InferBarriers || (len(h.bars) == 0 && !global) {
		return nil, nil
	}
	if lead && !global {
		// The command buffer's leading barrier (Lead) carries them.
		h.barrierSubmits.Add(1)
		return nil, nil
	}
	if global {
		src |= vk.StageAllCommands
		dst |= vk.StageAllCommands
	}
	var free *prelude
	for _, p := range h.preludes {
		if p.global == global && p.src == src && p.dst == dst && equalBarriers(p.bars, h.bars) {
			p.last = v
			h.barrierSubmits.Add(1)
			h.preludeSubmits.Add(1)
			return p.cmd, nil
		}
		if free == nil && q.Completed() >= p.last {
			free = p
		}
	}
	if free == nil {
		if h.pool == 0 {
			pool, err := h.dev.VK.CreateCommandPool(h.family, vk.CommandPoolResetBuffer)
			if err != nil {
				return nil, err
			}
			h.pool = pool
		}
		cmd, err := h.dev.VK.AllocateCommandBuffer(h.pool)
		if err != nil {
			return nil, err
		}
		free = &prelude{cmd: cmd}
		h.preludes = append(h.preludes, free)
	}
	// Until it is recorded again, free matches no barriers: if recording
	// fails, its command buffer is not executable.
	free.global, free.src, free.dst, free.bars = false, 0, 0, free.bars[:0]
	if err := vk.ResetCommandBuffer(free.cmd); err != nil {
		return nil, err
	}
	if err := vk.BeginCommandBuffer(free.cmd, vk.CommandBufferSimultaneousUse); err != nil {
		return nil, err
	}
	var gsrc, gdst uint32
	if global {
		gsrc, gdst = vk.AccessMemoryWrite, vk.AccessMemoryRead|vk.AccessMemoryWrite
	}
	vk.CmdPipelineBarrier(free.cmd, src, dst, gsrc, gdst, h.bars)
	if err := vk.EndCommandBuffer(free.cmd); err != nil {
		return nil, err
	}
	free.global, free.src, free.dst, free.last = global, src, dst, v
	free.bars = append(free.bars[:0], h.bars...)
	h.records.Add(1)
	h.barrierSubmits.Add(1)
	h.preludeSubmits.Add(1)
	return free.cmd, nil
}

func equalBarriers(a, b []vk.BufferBarrier) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// commit records that h's command buffer was submitted. Called with q.mu
// held, after prelude and a successful submit.
func (h *Hazards) commit(q *Queue) {
	if len(h.Uses) > 0 {
		q.reused = false // the prelude carried the global barrier
	}
	for i, u := range h.Uses {
		st := q.hazards[u.Buffer]
		if st == nil {
			st = &hazardState{}
			q.hazards[u.Buffer] = st
		}
		if u.WStages != 0 {
			// Every access of this submit is ordered after the earlier
			// ones (its prelude); later submits order after this one's.
			*st = hazardState{wStages: u.WStages, wAccess: u.WAccess, rStages: u.RStages}
			continue
		}
		st.rStages |= u.RStages
		if h.barred[i] {
			st.visStages |= u.RStages
			st.visAccess |= u.RAccess
		}
	}
}

// forgetBuffer drops every queue's state for buf, which is being destroyed.
// Its memory may be bound to a new buffer, so the next tracked submit on a
// queue that had state for it carries a global barrier.
func (d *Device) forgetBuffer(buf vk.Buffer) {
	for _, q := range d.queues {
		q.mu.Lock()
		if _, ok := q.hazards[buf]; ok {
			delete(q.hazards, buf)
			q.reused = true
		}
		q.mu.Unlock()
	}
}

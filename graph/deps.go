package graph

import (
	"sort"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/record"
	"github.com/vkflow/vkflow/vk"
)

// access is one node's use of a byte range of a buffer.
type access struct {
	buf    vk.Buffer
	lo, hi uint64
	stage  uint32
	mask   uint32 // access mask
}

func (a access) writes() bool { return a.mask&record.WriteAccess != 0 }

// Hazard kinds of an edge.
const (
	hazRAW = iota
	hazWAR
	hazWAW
	hazOrder // After: no buffer, a full memory dependency
)

var hazNames = [...]string{"RAW", "WAR", "WAW", "after"}

// edge orders node to after node from; for a hazard, on the intersection
// of their ranges of buf, with the producer's and consumer's stages and
// accesses (srcMask is 0 for a read: write-after-read needs only an
// execution dependency).
type edge struct {
	from, to         int
	kind             uint8
	buf              vk.Buffer
	lo, hi           uint64
	srcStage, dstStg uint32
	srcMask, dstMask uint32
}

// reader is a read of an interval since its last write.
type reader struct {
	node        int
	stage, mask uint32
}

// ival is a byte range of one buffer with uniform history: its last
// writer (-1 for none) and the reads since.
type ival struct {
	lo, hi       uint64
	writer       int
	wStage, wMsk uint32
	readers      []reader
}

// infer derives the edges between nodes from their accesses, in recording
// order: every read depends on the last overlapping write (RAW), every
// write on the last overlapping write (WAW) and the reads since (WAR).
// Ranges are exact: accesses to disjoint bytes of one buffer do not
// depend on each other. It reports the buffers read before anything in
// the graph writes them (uninit), and the edges from a run to the next
// (wrap: the graph's accesses followed by themselves again, edges from the
// first copy to the second, with the second's nodes numbered as the
// first's). O(accesses × overlapping intervals).
func infer(accs [][]access) (edges, wrap []edge, uninit map[vk.Buffer][]int) {
	h := &history{bufs: map[vk.Buffer][]ival{}}
	uninit = map[vk.Buffer][]int{}
	edges = make([]edge, 0, 4*len(accs)) // a few per node: fewer copies as it grows
	for n, as := range accs {
		for _, a := range as {
			h.apply(n, a, func(e edge) { edges = append(edges, e) }, func(b vk.Buffer) { uninit[b] = append(uninit[b], n) })
		}
	}
	nn := len(accs)
	for n, as := range accs {
		for _, a := range as {
			h.apply(nn+n, a, func(e edge) {
				if e.from < nn {
					e.to -= nn
					wrap = append(wrap, e)
				}
			}, func(vk.Buffer) {})
		}
	}
	return edges, wrap, uninit
}

// history is, per buffer, the intervals of uniform access history.
type history struct{ bufs map[vk.Buffer][]ival }

// apply adds node n's access a, emitting the edges it needs and calling
// unwritten for a read of bytes nothing wrote before.
func (h *history) apply(n int, a access, emit func(edge), unwritten func(vk.Buffer)) {
	iv := split(h.bufs[a.buf], a.lo, a.hi)
	covered := uint64(0)
	read := false
	for k := range iv {
		v := &iv[k]
		if v.hi <= a.lo || v.lo >= a.hi {
			continue
		}
		covered += v.hi - v.lo
		if v.writer >= 0 && v.writer != n {
			kind := uint8(hazRAW)
			if a.writes() {
				kind = hazWAW
			}
			emit(edge{from: v.writer, to: n, kind: kind, buf: a.buf, lo: v.lo, hi: v.hi,
				srcStage: v.wStage, dstStg: a.stage, srcMask: v.wMsk, dstMask: a.mask})
		} else if v.writer < 0 && !a.writes() {
			read = true
		}
		if a.writes() {
			for _, r := range v.readers {
				if r.node != n {
					emit(edge{from: r.node, to: n, kind: hazWAR, buf: a.buf, lo: v.lo, hi: v.hi,
						srcStage: r.stage, dstStg: a.stage, dstMask: a.mask})
				}
			}
			v.writer, v.wStage, v.wMsk, v.readers = n, a.stage, a.mask&record.WriteAccess, v.readers[:0]
		} else {
			v.readers = append(v.readers, reader{node: n, stage: a.stage, mask: a.mask})
		}
	}
	if covered < a.hi-a.lo {
		// Bytes nothing touched before: a new interval.
		iv = fillGaps(iv, a, n)
		read = read || !a.writes()
	}
	if read {
		unwritten(a.buf)
	}
	h.bufs[a.buf] = merge(iv)
}

// split cuts the intervals at lo and hi so that each lies inside or
// outside [lo, hi).
func split(iv []ival, lo, hi uint64) []ival {
	for _, cut := range [2]uint64{lo, hi} {
		for k := 0; k < len(iv); k++ {
			v := iv[k]
			if v.lo < cut && cut < v.hi {
				right := v
				right.lo = cut
				right.readers = append([]reader(nil), v.readers...)
				iv[k].hi = cut
				iv = append(iv, ival{})
				copy(iv[k+2:], iv[k+1:])
				iv[k+1] = right
				k++
			}
		}
	}
	return iv
}

// fillGaps adds intervals for the parts of a's range that no interval
// covers, with a as their first access.
func fillGaps(iv []ival, a access, n int) []ival {
	sort.Slice(iv, func(i, j int) bool { return iv[i].lo < iv[j].lo })
	at := a.lo
	var add []ival
	for _, v := range iv {
		if v.hi <= at || v.lo >= a.hi {
			continue
		}
		if v.lo > at {
			add = append(add, first(at, v.lo, a, n))
		}
		at = max(at, v.hi)
	}
	if at < a.hi {
		add = append(add, first(at, a.hi, a, n))
	}
	iv = append(iv, add...)
	sort.Slice(iv, func(i, j int) bool { return iv[i].lo < iv[j].lo })
	return iv
}

func first(lo, hi uint64, a access, n int) ival {
	v := ival{lo: lo, hi: hi, writer: -1}
	if a.writes() {
		v.writer, v.wStage, v.wMsk = n, a.stage, a.mask&record.WriteAccess
	} else {
		v.readers = []reader{{node: n, stage: a.stage, mask: a.mask}}
	}
	return v
}

// merge joins neighbouring intervals with the same history, so that whole
// -buffer accesses keep one interval per buffer.
func merge(iv []ival) []ival {
	out := iv[:0]
	for _, v := range iv {
		if k := len(out) - 1; k >= 0 && out[k].hi == v.lo && sameHistory(out[k], v) {
			out[k].hi = v.hi
			continue
		}
		out = append(out, v)
	}
	return out
}

func sameHistory(a, b ival) bool {
	if a.writer != b.writer || a.wStage != b.wStage || a.wMsk != b.wMsk || len(a.readers) != len(b.readers) {
		return false
	}
	for i := range a.readers {
		if a.readers[i].node != b.readers[i].node || a.readers[i].stage != b.readers[i].stage || a.readers[i].mask != b.readers[i].mask {
			return false
		}
	}
	return true
}

// accessesOf lists what node n reads and writes of the tensors' buffers,
// merging accesses of one node to the same range.
func accessesOf(n *node) []access {
	var as []access
	add := func(a access) {
		for k := range as {
			if as[k].buf == a.buf && as[k].lo == a.lo && as[k].hi == a.hi {
				as[k].stage |= a.stage
				as[k].mask |= a.mask
				return
			}
		}
		as = append(as, a)
	}
	switch n.kind {
	case KindDispatch:
		// A descriptor binds the tensor's bytes.
		for k, t := range n.tensors {
			add(access{buf: t.Allocation().Buffer, hi: max(t.Bytes(), 1), stage: vk.StageComputeShader, mask: record.BindingAccess(n.algo, k)})
		}
	case KindCopy:
		src, dst := n.tensors[0].Allocation().Buffer, n.tensors[1].Allocation().Buffer
		for _, r := range n.regions {
			add(access{buf: src, lo: r.SrcOffset, hi: r.SrcOffset + r.Size, stage: vk.StageTransfer, mask: vk.AccessTransferRead})
			add(access{buf: dst, lo: r.DstOffset, hi: r.DstOffset + r.Size, stage: vk.StageTransfer, mask: vk.AccessTransferWrite})
		}
	case KindFill:
		// A fill may write the tensor's own padding up to a word.
		t := n.tensors[0]
		add(access{buf: t.Allocation().Buffer, hi: max(t.Bytes(), n.fill.Size, 1), stage: vk.StageTransfer, mask: vk.AccessTransferWrite})
	case KindUpload:
		t := n.tensors[0]
		add(access{buf: t.Allocation().Buffer, hi: max(t.Bytes(), 1), stage: vk.StageTransfer, mask: vk.AccessTransferWrite})
	case KindDownload:
		t := n.tensors[0]
		add(access{buf: t.Allocation().Buffer, hi: max(t.Bytes(), 1), stage: vk.StageTransfer, mask: vk.AccessTransferRead})
	case KindOpaque:
		// Declared accesses cover whole buffers.
		for k, t := range n.tensors {
			mask := uint32(vk.AccessMemoryRead)
			if k >= n.reads {
				mask = vk.AccessMemoryWrite
			}
			add(access{buf: t.Allocation().Buffer, hi: t.Allocation().Size, stage: vk.StageAllCommands, mask: mask})
		}
	}
	return as
}

// conflicts reports a dispatch that binds overlapping bytes of one buffer
// to two bindings that both write: two writers of one tensor in one
// dispatch race with each other.
func conflicts(n *node) error {
	if n.kind != KindDispatch {
		return nil
	}
	for i, a := range n.tensors {
		for j := i + 1; j < len(n.tensors); j++ {
			b := n.tensors[j]
			if a.Allocation().Buffer == b.Allocation().Buffer && writes(n.algo, i) && writes(n.algo, j) {
				return core.Invalid("bindings %d and %d write the same tensor %v: two writers in one dispatch race", i, j, a)
			}
		}
	}
	return nil
}

func writes(a *algorithm.Algorithm, i int) bool { return a.Access(i) != algorithm.ReadOnly }

package sequence

import (
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// This file checks copy regions against vkCmdCopyBuffer's rule: the union
// of the source regions and the union of the destination regions must not
// overlap in memory, and no two destination regions may overlap. Breaking
// it gives undefined results, so Copy rejects it.

// place says where a tensor's bytes lie: in buffer buf from byte bufOff,
// in device memory mem from byte memOff (mem 0 when unknown), and at host
// address host when mapped (0 if not). Two tensors share bytes when they
// are views of one buffer, or of buffers bound to one memory, or when
// their host addresses overlap: zero-copy host imports of overlapping host
// memory each have a VkDeviceMemory of their own.
type place struct {
	buf, mem       uint64
	bufOff, memOff uint64
	host           uint64
}

// placeOf returns where t's bytes lie. A tensor starts at byte 0 of its
// buffer; views of another owner's buffer (DLPack kDLVulkan imports) share
// it.
func placeOf(t *tensor.Tensor) place {
	a := t.Allocation()
	return place{buf: uint64(a.Buffer), mem: uint64(a.Memory()), memOff: a.MemoryOffset(), host: uint64(uintptr(a.Mapped))}
}

// sameSpace reports whether a and b are in one address space, and the
// offsets of their byte 0 in it.
func sameSpace(a, b place) (bool, uint64, uint64) {
	switch {
	case a.buf == b.buf:
		return true, a.bufOff, b.bufOff
	case a.mem != 0 && a.mem == b.mem:
		return true, a.memOff, b.memOff
	case a.host != 0 && b.host != 0:
		return true, a.host, b.host
	}
	return false, 0, 0
}

// conflict names two regions whose bytes overlap: region I's destination
// with region J's source (dstSrc) or with region J's destination.
type conflict struct {
	I, J   int
	dstSrc bool
}

// overlaps reports whether [a, a+n) and [b, b+m) intersect.
func overlaps(a, n, b, m uint64) bool { return a < b+m && b < a+n }

// copyConflict returns the first pair of regions that vkCmdCopyBuffer
// forbids, or ok false. Offsets are relative to the tensors' byte 0; sizes
// are non-zero and in bounds.
func copyConflict(src, dst place, rs []vk.CopyRegion) (c conflict, found bool) {
	shared, sBase, dBase := sameSpace(src, dst)
	for i, r := range rs {
		d := dBase + r.DstOffset
		for j, q := range rs {
			if shared && overlaps(d, r.Size, sBase+q.SrcOffset, q.Size) {
				return conflict{I: i, J: j, dstSrc: true}, true
			}
			if j > i && overlaps(r.DstOffset, r.Size, q.DstOffset, q.Size) {
				return conflict{I: i, J: j}, true
			}
		}
	}
	return conflict{}, false
}

package sequence

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkflow/vkflow/vk"
)

func TestCopyConflict(t *testing.T) {
	a := place{buf: 1, mem: 9, memOff: 0}
	b := place{buf: 2, mem: 9, memOff: 64} // after a in the same memory
	c := place{buf: 3, mem: 9, memOff: 8}  // aliases a from a's byte 8
	v := place{buf: 1, mem: 9, memOff: 0}  // another tensor over a's buffer
	u := place{buf: 4, mem: 0, memOff: 8}  // memory unknown
	w := place{buf: 5, mem: 7, memOff: 0}  // other memory
	r := func(src, dst, n uint64) vk.CopyRegion { return vk.CopyRegion{SrcOffset: src, DstOffset: dst, Size: n} }
	tests := []struct {
		name     string
		src, dst place
		rs       []vk.CopyRegion
		want     conflict
		found    bool
	}{
		{"disjoint in one buffer", a, a, []vk.CopyRegion{r(0, 8, 8), r(16, 24, 8)}, conflict{}, false},
		{"touching ranges do not overlap", a, a, []vk.CopyRegion{r(0, 8, 8)}, conflict{}, false},
		{"self overlap", a, a, []vk.CopyRegion{r(0, 4, 8)}, conflict{0, 0, true}, true},
		{"dst over a later src", a, a, []vk.CopyRegion{r(0, 16, 4), r(16, 32, 4)}, conflict{0, 1, true}, true},
		{"later dst over an earlier src", a, a, []vk.CopyRegion{r(0, 32, 4), r(40, 2, 4)}, conflict{1, 0, true}, true},
		{"dsts overlap across tensors", a, w, []vk.CopyRegion{r(0, 0, 8), r(8, 4, 8)}, conflict{0, 1, false}, true},
		{"sources may overlap", a, w, []vk.CopyRegion{r(0, 0, 8), r(4, 8, 8)}, conflict{}, false},
		{"view of the same buffer", a, v, []vk.CopyRegion{r(0, 4, 8)}, conflict{0, 0, true}, true},
		{"same memory, apart", a, b, []vk.CopyRegion{r(0, 0, 64)}, conflict{}, false},
		{"same memory, aliased", a, c, []vk.CopyRegion{r(8, 0, 4)}, conflict{0, 0, true}, true},
		{"aliased but regions apart", a, c, []vk.CopyRegion{r(0, 0, 8)}, conflict{}, false},
		{"unknown memory is not shared", u, a, []vk.CopyRegion{r(0, 0, 8)}, conflict{}, false},
		{"other memory", w, a, []vk.CopyRegion{r(0, 0, 8)}, conflict{}, false},
		{"no regions", a, a, nil, conflict{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := copyConflict(tt.src, tt.dst, tt.rs)
			assert.Equal(t, tt.found, found)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.found, bruteConflict(tt.src, tt.dst, tt.rs))
		})
	}
}

// bruteConflict is the oracle: it lists every byte address each region
// touches and looks for a destination byte written twice or also read.
func bruteConflict(src, dst place, rs []vk.CopyRegion) bool {
	type addr struct{ space, at uint64 }
	at := func(p place, off uint64) []addr {
		if p.mem != 0 {
			// bytes bound to memory: one space per memory, shared by
			// every buffer bound to it.
			return []addr{{1<<62 | p.mem, p.memOff + p.bufOff + off}, {p.buf, p.bufOff + off}}
		}
		return []addr{{p.buf, p.bufOff + off}}
	}
	written := map[addr]int{} // address -> region that wrote it
	for i, r := range rs {
		for k := uint64(0); k < r.Size; k++ {
			for _, x := range at(dst, r.DstOffset+k) {
				if j, ok := written[x]; ok && j != i {
					return true
				}
				written[x] = i
			}
		}
	}
	for _, r := range rs {
		for k := uint64(0); k < r.Size; k++ {
			for _, x := range at(src, r.SrcOffset+k) {
				if _, ok := written[x]; ok {
					return true
				}
			}
		}
	}
	return false
}

// FuzzCopyRegions checks copyConflict against the brute-force oracle on
// small regions between two tensors in every relation: one buffer, two
// buffers in one memory (maybe aliased), unknown memory, other memory.
func FuzzCopyRegions(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(0), []byte{0, 4, 7})
	f.Add(uint8(1), uint8(0), uint8(8), []byte{8, 0, 3, 20, 30, 5})
	f.Add(uint8(2), uint8(3), uint8(5), []byte{0, 0, 7, 1, 3, 7})
	f.Add(uint8(3), uint8(0), uint8(0), []byte{0, 0, 15, 4, 16, 15, 9, 9, 1})
	f.Fuzz(func(t *testing.T, mode, srcOff, dstOff uint8, raw []byte) {
		if len(raw) > 3*16 {
			raw = raw[:3*16]
		}
		var rs []vk.CopyRegion
		for i := 0; i+2 < len(raw); i += 3 {
			rs = append(rs, vk.CopyRegion{SrcOffset: uint64(raw[i] % 48), DstOffset: uint64(raw[i+1] % 48), Size: uint64(raw[i+2]%16) + 1})
		}
		src := place{buf: 1, mem: 9, memOff: uint64(srcOff % 64)}
		dst := src
		switch mode % 4 {
		case 1: // another buffer bound to the same memory
			dst = place{buf: 2, mem: 9, memOff: uint64(dstOff % 64)}
		case 2: // other memory
			dst = place{buf: 2, mem: 8, memOff: uint64(dstOff % 64)}
		case 3: // memory unknown
			dst = place{buf: 2, memOff: uint64(dstOff % 64)}
		}
		c, found := copyConflict(src, dst, rs)
		if want := bruteConflict(src, dst, rs); found != want {
			t.Fatalf("copyConflict(%+v, %+v, %v) = %v, oracle %v", src, dst, rs, found, want)
		}
		if found && (c.I < 0 || c.I >= len(rs) || c.J < 0 || c.J >= len(rs)) {
			t.Fatalf("conflict %+v names regions outside 0..%d", c, len(rs)-1)
		}
	})
}

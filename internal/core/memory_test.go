package core

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlockTakeGive(t *testing.T) {
	tests := []struct {
		name  string
		take  [][2]uint64 // size, align
		want  []uint64    // offsets
		fails int         // index of a take that must fail, or -1
	}{
		{"aligned packing", [][2]uint64{{100, 64}, {100, 64}, {28, 4}}, []uint64{0, 128, 100}, -1}, // the 28-byte gap is reused
		{"exact fit", [][2]uint64{{512, 256}, {512, 256}}, []uint64{0, 512}, -1},
		{"too big", [][2]uint64{{1000, 16}, {100, 16}}, []uint64{0, 0}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &block{size: 1024, free: []span{{0, 1024}}}
			for i, tk := range tt.take {
				off, ok := b.take(tk[0], tk[1], false)
				if i == tt.fails {
					assert.False(t, ok)
					continue
				}
				require.True(t, ok)
				assert.Equal(t, tt.want[i], off)
				assert.Zero(t, off%tk[1], "aligned")
			}
		})
	}
}

// Random takes and gives never overlap and always coalesce back to one
// free span.
func TestBlockRandomCoalesces(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := &block{size: 1 << 20, free: []span{{0, 1 << 20}}}
	type live struct{ off, size uint64 }
	var held []live
	for i := 0; i < 5000; i++ {
		if len(held) > 0 && r.IntN(2) == 0 {
			k := r.IntN(len(held))
			b.give(held[k].off, held[k].size)
			held = append(held[:k], held[k+1:]...)
			continue
		}
		size := uint64(1 + r.IntN(8192))
		align := uint64(1) << r.IntN(9)
		if off, ok := b.take(size, align, false); ok {
			require.Zero(t, off%align)
			for _, h := range held {
				require.False(t, off < h.off+h.size && h.off < off+size, "overlap")
			}
			held = append(held, live{off, size})
		}
	}
	for _, h := range held {
		b.give(h.off, h.size)
	}
	assert.Equal(t, []span{{0, 1 << 20}}, b.free)
	assert.Zero(t, b.used)
}

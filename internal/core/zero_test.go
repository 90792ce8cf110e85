package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddSpan(t *testing.T) {
	tests := []struct {
		name string
		in   []span
		add  span
		want []span
	}{
		{"empty", nil, span{16, 16}, []span{{16, 16}}},
		{"before", []span{{64, 16}}, span{0, 16}, []span{{0, 16}, {64, 16}}},
		{"after", []span{{0, 16}}, span{64, 16}, []span{{0, 16}, {64, 16}}},
		{"touching both", []span{{0, 16}, {32, 16}}, span{16, 16}, []span{{0, 48}}},
		{"inside", []span{{0, 64}}, span{16, 16}, []span{{0, 64}}},
		{"covering several", []span{{0, 16}, {32, 16}, {64, 16}, {128, 16}}, span{8, 72}, []span{{0, 80}, {128, 16}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := addSpan(append([]span(nil), tt.in...), tt.add.off, tt.add.size)
			assert.Equal(t, tt.want, got)
		})
	}
	assert.Equal(t, []span{{0, 8}, {24, 8}, {64, 16}}, removeSpan([]span{{0, 32}, {64, 16}}, 8, 16))
	assert.Equal(t, []span{{0, 8}, {72, 8}}, removeSpan([]span{{0, 32}, {64, 16}}, 8, 64))
	assert.Empty(t, removeSpan([]span{{16, 16}}, 0, 64))
	assert.True(t, overlaps([]span{{0, 16}, {64, 16}}, 70, 4))
	assert.True(t, overlaps([]span{{0, 16}, {64, 16}}, 10, 100))
	assert.False(t, overlaps([]span{{0, 16}, {64, 16}}, 16, 48))
	assert.False(t, overlaps(nil, 0, 1))
}

// take with clean skips dirty bytes; without, it takes the first fit.
func TestTakeClean(t *testing.T) {
	b := &block{size: 1024, free: []span{{0, 1024}}, dirty: []span{{0, 256}, {512, 128}}}
	off, ok := b.take(256, 16, true)
	require.True(t, ok)
	assert.Equal(t, uint64(256), off, "first clean gap")
	off, ok = b.take(200, 16, true)
	require.True(t, ok)
	assert.Equal(t, uint64(640), off, "skips the dirty range at 512")
	_, ok = b.take(256, 16, true)
	assert.False(t, ok, "no clean gap of 256 left")
	off, ok = b.take(256, 16, false)
	require.True(t, ok)
	assert.Equal(t, uint64(0), off, "dirty bytes when nothing clean fits")
}

package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/examples/internal/scene"
	"github.com/vkflow/vkflow/internal/testutil"
)

// TestPipeline renders a small scene under validation (any message fails the
// test) and checks it against the CPU reference: pipelined with a ring of 2
// and of 3 (the pass count not a multiple of K), serialized, with submits
// handed over in orders that only the timelines can straighten out, and
// several runs of one pipeline, which re-submit its sequences after a reset.
func TestPipeline(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := scene.Params{Size: 64, Tris: 16, Passes: 8}
	require.NoError(t, p.Validate())
	geo := scene.Geometry(p)
	want := scene.Reference(p, geo)

	for _, tt := range []struct {
		name       string
		k          int
		serialized bool
	}{
		{"pipelined K=2", 2, false},
		{"pipelined K=3", 3, false},
		{"serialized", 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := render(ctx, m, p, geo, tt.k, tt.serialized)
			require.NoError(t, err)
			require.Less(t, scene.MaxDiff(got, want), scene.Tolerance)
		})
	}

	// Orders in which submits reach vkflow before what they wait for: only
	// the timelines can order the GPU work right, and the scheduler must hold
	// each submit until its waits are promised.
	for name, order := range map[string]submitOrder{"rasters first": rastersFirst, "blends first": blendsFirst} {
		t.Run(name, func(t *testing.T) {
			pl, err := newPipeline(m, p, geo, 2)
			require.NoError(t, err)
			defer func() { require.NoError(t, pl.close()) }()
			pl.order = order
			_, err = pl.run(ctx, p.Passes, false)
			require.NoError(t, err)
			got, err := pl.pixels()
			require.NoError(t, err)
			require.Less(t, scene.MaxDiff(got, want), scene.Tolerance)
		})
	}

	t.Run("rerun", func(t *testing.T) {
		pl, err := newPipeline(m, p, geo, 2)
		require.NoError(t, err)
		defer func() { require.NoError(t, pl.close()) }()
		for _, serialized := range []bool{false, true, false} {
			_, err := pl.run(ctx, p.Passes, serialized)
			require.NoError(t, err)
			got, err := pl.pixels()
			require.NoError(t, err)
			require.Less(t, scene.MaxDiff(got, want), scene.Tolerance, "serialized=%v", serialized)
		}
	})
}

package timeline_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// The scheduler's index of held submits, under random orders: submits on
// several timelines, each waiting for random points of earlier submits
// (in a random dependency order), accepted in an order unrelated to it, so
// many are held and released in cascades. Each submit fills its timeline's
// tensor with its own value; if the signals of one timeline reached the
// driver out of order, the tensor would end at a wrong value (and the
// timeline would go backwards).
func TestSchedulerRandomOrders(t *testing.T) {
	for round := range 4 {
		seed := uint64(time.Now().UnixNano())
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Logf("seed %d", seed)
			schedulerRandomOrder(t, rand.New(rand.NewPCG(seed, 9)))
		})
	}
}

func schedulerRandomOrder(t *testing.T, r *rand.Rand) {
	const (
		nTimelines = 4
		nSubmits   = 80
	)
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	tls := make([]*timeline.Timeline, nTimelines)
	xs := make([]*tensor.Tensor, nTimelines)
	for j := range tls {
		tls[j], err = timeline.New(m, 0)
		require.NoError(t, err)
		xs[j], err = tensor.New(m, tensor.Uint32, []int{64})
		require.NoError(t, err)
	}
	// Submits in dependency order: submit i signals value on timeline tl and
	// waits for up to two points signalled by submits before it (and maybe
	// for the gate, which the host opens after everything is accepted).
	type submit struct {
		tl     int
		value  uint64
		waits  []timeline.Point
		gated  bool
		queue  int
		issued bool
	}
	var subs []submit
	count := make([]uint64, nTimelines)
	perTL := make([][]int, nTimelines) // submit indices per timeline, by value
	for i := range nSubmits {
		s := submit{tl: r.IntN(nTimelines), gated: r.IntN(4) == 0, queue: r.IntN(2)}
		count[s.tl]++
		s.value = count[s.tl]
		for range r.IntN(3) {
			if i == 0 {
				break
			}
			d := subs[r.IntN(i)]
			s.waits = append(s.waits, timeline.Point{Timeline: tls[d.tl], Value: d.value})
		}
		subs = append(subs, s)
		perTL[s.tl] = append(perTL[s.tl], i)
	}
	// Accept in a random interleaving of the timelines (values on one
	// timeline must be accepted in increasing order).
	var pending []sequence.Pending
	next := make([]int, nTimelines)
	for accepted := 0; accepted < nSubmits; accepted++ {
		var j int
		for {
			j = r.IntN(nTimelines)
			if next[j] < len(perTL[j]) {
				break
			}
		}
		s := &subs[perTL[j][next[j]]]
		next[j]++
		seq, err := sequence.New(m, s.queue)
		require.NoError(t, err)
		seq.Fill(xs[s.tl], uint32(s.value))
		opts := []sequence.SubmitOption{sequence.Signal(tls[s.tl], s.value)}
		for _, w := range s.waits {
			opts = append(opts, sequence.Wait(w.Timeline, w.Value))
		}
		if s.gated {
			opts = append(opts, sequence.Wait(gate, 1))
		}
		p := seq.Submit(ctx, opts...)
		require.NoError(t, p.Err())
		pending = append(pending, p)
		require.NoError(t, seq.Close())
	}
	require.NoError(t, gate.Signal(1))
	for i, p := range pending {
		require.NoError(t, p.Wait(ctx), "submit %d; held: %v", i, m.Runtime().Held())
	}
	assert.Empty(t, m.Runtime().Held())
	read, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, read.SyncLocal(xs...).Eval(ctx))
	for j := range tls {
		v, err := tls[j].Value()
		require.NoError(t, err)
		assert.Equal(t, count[j], v, "timeline %d", j)
		if count[j] == 0 {
			continue
		}
		got, err := xs[j].Uint32s()
		require.NoError(t, err)
		for _, g := range got {
			require.Equal(t, uint32(count[j]), g, "tensor of timeline %d: the last fill was not the last signal", j)
		}
	}
}

// WithMaxHeldSubmits bounds the held submits: one more is refused with
// ErrBusy at once, a submit that needs no holding is still accepted, and
// once the held ones are released submits are accepted again.
func TestMaxHeldSubmits(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithMaxHeldSubmits(2))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	p1 := s.Submit(ctx, sequence.Wait(gate, 1))
	require.NoError(t, p1.Err())
	p2 := s.Submit(ctx, sequence.Wait(gate, 2), sequence.Signal(tl, 1))
	require.NoError(t, p2.Err())
	err = s.Submit(ctx, sequence.Wait(gate, 1)).Err()
	require.ErrorIs(t, err, vkflow.ErrBusy)
	assert.Contains(t, err.Error(), "WithMaxHeldSubmits")
	assert.ErrorIs(t, s.Submit(ctx, sequence.Signal(tl, 2)).Err(), vkflow.ErrBusy,
		"held behind the earlier held signal of the same timeline")
	require.NoError(t, s.Submit(ctx).Wait(ctx), "a submit that is not held is never refused")
	assert.Len(t, m.Runtime().Held(), 2)
	require.NoError(t, gate.Signal(2))
	require.NoError(t, p1.Wait(ctx))
	require.NoError(t, p2.Wait(ctx))
	require.NoError(t, s.Submit(ctx, sequence.Wait(gate, 3)).Err(), "room again")
	require.NoError(t, gate.Signal(3))
}

package core

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkflow/vkflow/vk"
)

// A signal of a timeline last signalled from another physical queue waits
// on the GPU for that earlier signal, so the two cannot execute out of
// order (found on an H200: the random-order scheduler test hung). On the
// same queue, or when the submit already waits that far, nothing is added.
func TestSignalsOrderedAcrossQueues(t *testing.T) {
	d := &Device{Log: slog.Default()}
	q0, q1 := &Queue{dev: d, Index: 0, sem: 100}, &Queue{dev: d, Index: 1, sem: 101}
	d.queues = []*Queue{q0, q1}
	tl := d.NewTimeline(7, 0, nil)
	other := d.NewTimeline(8, 0, nil)
	type wait struct {
		sem vk.Semaphore
		v   uint64
	}
	tests := []struct {
		name  string
		lastQ *Queue
		s     *Submission
		want  []wait
	}{
		{"other queue: waits for the last signal", q0, &Submission{Q: q1, Signals: []Point{{TL: tl, Value: 4}}}, []wait{{7, 3}}},
		{"same queue: queue order suffices", q1, &Submission{Q: q1, Signals: []Point{{TL: tl, Value: 4}}}, nil},
		{"never signalled", nil, &Submission{Q: q1, Signals: []Point{{TL: tl, Value: 4}}}, nil},
		{"already waits that far", q0, &Submission{Q: q1, Waits: []Point{{TL: tl, Value: 3}}, Signals: []Point{{TL: tl, Value: 4}}}, []wait{{7, 3}}},
		{"own waits kept, then the order wait", q0, &Submission{Q: q1, Waits: []Point{{TL: other, Value: 9}}, Signals: []Point{{TL: tl, Value: 4}, {TL: tl, Value: 5}}}, []wait{{8, 9}, {7, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl.lastQ, tl.last = tt.lastQ, 0
			if tt.lastQ != nil {
				tl.last = 3
			}
			b := d.sched.build(tt.s)
			var got []wait
			for i, sem := range b.WaitSems {
				got = append(got, wait{sem, b.WaitValues[i]})
			}
			assert.Equal(t, tt.want, got)
			assert.Len(t, b.WaitStages, len(b.WaitSems))
		})
	}
}

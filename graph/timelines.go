package graph

import (
	"sync"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/timeline"
)

// An Exec's timelines are kept for later Execs of the same device instead
// of being destroyed when the Exec is: lavapipe (Mesa 22.3) crashed in its
// queue thread, about one run in two, when a timeline semaphore an Exec
// had just finished with was destroyed (TestExamplesRingRunsBackToBack: a
// NULL mutex in libvulkan_lvp.so); kept ones never crashed. A batch's
// signal operations are not ordered among themselves, so the queue's own
// value does not prove the batch is done with another semaphore it
// signals. The Manager closes the kept timelines with the rest.
var spare struct {
	mu  sync.Mutex
	tls map[*core.Device][]*timeline.Timeline
}

// takeTimeline returns a spare timeline of d, or a new one, and its
// current value: the Exec's values start above it.
func takeTimeline(d *core.Device) (*timeline.Timeline, uint64, error) {
	spare.mu.Lock()
	for dev := range spare.tls {
		if dev.Closed() {
			delete(spare.tls, dev) // its timelines went with it
		}
	}
	var tl *timeline.Timeline
	if s := spare.tls[d]; len(s) > 0 {
		tl = s[len(s)-1]
		spare.tls[d] = s[:len(s)-1]
	}
	spare.mu.Unlock()
	if tl != nil {
		if v, err := tl.Value(); err == nil {
			return tl, v, nil
		}
		tl.Close()
	}
	tl, err := timeline.New(d, 0)
	return tl, 0, err
}

// giveTimeline keeps tl, which no pending work uses, for a later Exec.
func giveTimeline(d *core.Device, tl *timeline.Timeline) {
	if d.Closed() || tl.Object().Closed() {
		tl.Close()
		return
	}
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.tls == nil {
		spare.tls = map[*core.Device][]*timeline.Timeline{}
	}
	spare.tls[d] = append(spare.tls[d], tl)
}

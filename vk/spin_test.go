package vk_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/vk"
)

// WaitSemaphoreSpin: a polled wait ends as soon as the value is there
// (not at the end of its spin), never outlasts its timeout (the spin is
// part of it), and blocks for what is left once the spin runs out.
func TestWaitSemaphoreSpin(t *testing.T) {
	const long = uint64(3 * time.Second)
	tests := []struct {
		name          string
		start         uint64        // the semaphore's initial value
		want          uint64        // the value waited for
		signalAfter   time.Duration // a host signal of want after this (0: none)
		spin, timeout uint64
		polled        bool          // the wait ended while polling
		timedOut      bool          // ErrTimeout
		within        time.Duration // the wait returned within this
	}{
		{"reached before the wait", 5, 4, 0, long, long, true, false, time.Second},
		{"reached while polling", 0, 1, 2 * time.Millisecond, long, 2 * long, true, false, time.Second},
		{"spin runs out, then blocks", 0, 1, 30 * time.Millisecond, uint64(time.Millisecond), long, false, false, 2 * time.Second},
		{"timeout shorter than the spin", 0, 1, 0, long, uint64(time.Millisecond), false, true, time.Second},
		{"no spin, no time: a poll", 0, 1, 0, 0, 0, false, true, time.Second},
		{"no spin, reached", 3, 3, 0, 0, 0, false, false, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A host signal from another goroutine during the wait
			// sometimes draws the layer's own race, which holds the wait
			// 10 s in the layer: then the time is not the wait's.
			seen := map[string]int{layerSemaphoreRace: 0}
			_, dev, _, _ := deviceExpecting(t, seen)
			sem, err := dev.CreateTimeline(tc.start)
			require.NoError(t, err)
			defer dev.DestroySemaphore(sem)
			done := make(chan error, 1)
			if tc.signalAfter > 0 {
				go func() {
					time.Sleep(tc.signalAfter)
					done <- dev.SignalSemaphore(sem, tc.want)
				}()
			}
			begin := time.Now()
			polled, err := dev.WaitSemaphoreSpin(sem, tc.want, tc.spin, tc.timeout)
			took := time.Since(begin)
			if tc.signalAfter > 0 {
				require.NoError(t, <-done)
			}
			if tc.timedOut {
				assert.ErrorIs(t, err, vk.ErrTimeout)
				assert.Equal(t, "vkWaitSemaphores: VK_TIMEOUT", err.Error())
			} else {
				assert.NoError(t, err)
			}
			if seen[layerSemaphoreRace] > 0 {
				t.Logf("the layer's race held the wait %v: its time is not checked", took)
				return
			}
			assert.Equal(t, tc.polled, polled, "polled")
			assert.Less(t, took, tc.within, "the wait took %v", took)
		})
	}
}

// A polling wait allocates nothing, whether it ends while polling or
// after the spin (a timed-out poll here).
func TestWaitSemaphoreSpinAllocatesNothing(t *testing.T) {
	_, dev, _, _ := device(t)
	sem, err := dev.CreateTimeline(1)
	require.NoError(t, err)
	defer dev.DestroySemaphore(sem)
	allocs := testutil.Allocs(200, func() {
		if _, err := dev.WaitSemaphoreSpin(sem, 1, uint64(time.Millisecond), uint64(time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := dev.WaitSemaphoreSpin(sem, 2, 1000, 2000); !errors.Is(err, vk.ErrTimeout) {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

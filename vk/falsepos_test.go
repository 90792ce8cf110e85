package vk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// report03259 is the text the 1.3.239 layer gives the debug callback for
// VUID-VkSemaphoreSignalInfo-value-03259 (vk_layer_logging.cpp's prefix,
// core_validation.cpp's message) about semaphore s.
func report03259(s Semaphore, value, pending uint64) Message {
	return Message{
		Severity: SeverityError,
		Types:    MessageValidation,
		ID:       vuidSignalBelowPending,
		Text: fmt.Sprintf("Validation Error: [ %s ] Object 0: handle = 0x%x, type = VK_OBJECT_TYPE_SEMAPHORE; | MessageID = 0x9b2f7a8 | "+
			"vkSignalSemaphore(): value (%d) must be less than value of any pending signal operation (%d) for semaphore VkSemaphore 0x%x[]. "+
			"The Vulkan spec states: value must be less than the value of any pending semaphore signal operations "+
			"(https://www.khronos.org/registry/vulkan/specs/1.3-extensions/html/vkspec.html#%s)",
			vuidSignalBelowPending, uint64(s), value, pending, uint64(s), vuidSignalBelowPending),
	}
}

// resetSharedSignals empties the records for one test, and again after it.
func resetSharedSignals(t *testing.T) {
	reset := func() {
		sharedSignals.mu.Lock()
		sharedSignals.m = nil
		sharedSignals.n.Store(0)
		sharedSignals.mu.Unlock()
	}
	reset()
	t.Cleanup(reset)
}

// The 1.3.239 layer's report of a host signal of an exported timeline
// (the NVIDIA H200 run: "value (5) must be less than value of any pending
// signal operation (1)", with no signal pending) reaches the debug sink as
// information that says why; every report that could be true passes
// unchanged: a pending value above the counter read before the signal,
// another semaphore or value, another VUID, a semaphore with no shared
// signal recorded, or one destroyed since.
func TestSharedSignalFalsePositive(t *testing.T) {
	resetSharedSignals(t)
	const sem, other = Semaphore(0x5581c2a0), Semaphore(0x5581c2a)
	var got []Message
	token := registerDebugSink(func(m Message) { got = append(got, m) })
	defer unregisterDebugSink(token)
	deliver := func(m Message) Message {
		got = nil
		dispatchDebug(token, m)
		require.Len(t, got, 1)
		return got[0]
	}

	before := report03259(sem, 5, 1)
	assert.Equal(t, before, deliver(before), "no shared signal recorded yet")

	noteHostSignal(sem, 5, 1) // the counter read 1 (the timeline's initial value), then Signal(5)
	for _, tc := range []struct {
		name   string
		m      Message
		proved bool
	}{
		{"the H200's report: pending 1, counter 1", report03259(sem, 5, 1), true},
		{"a pending value below the counter", report03259(sem, 5, 0), true},
		{"a pending value above the counter: a real signal in flight", report03259(sem, 5, 2), false},
		{"another value", report03259(sem, 6, 1), false},
		{"another semaphore (a prefix of the handle's hex)", report03259(other, 5, 1), false},
		{"another VUID", func() Message { m := report03259(sem, 5, 1); m.ID = "VUID-VkSemaphoreSignalInfo-value-03258"; return m }(), false},
		{"a text without the values", func() Message { m := report03259(sem, 5, 1); m.Text = "value must be less"; return m }(), false},
	} {
		out := deliver(tc.m)
		if !tc.proved {
			assert.Equal(t, tc.m, out, tc.name)
			continue
		}
		assert.Equal(t, SeverityInfo, out.Severity, tc.name)
		assert.Equal(t, tc.m.ID, out.ID, tc.name)
		assert.True(t, strings.HasPrefix(out.Text, "vkflow: a validation layer false positive (the semaphore's counter was at 1 before this host signal of 5"), "%s: %s", tc.name, out.Text)
		assert.True(t, strings.HasSuffix(out.Text, tc.m.Text), tc.name)
	}

	// A later signal replaces the record; a destroyed semaphore has none.
	noteHostSignal(sem, 9, 5)
	assert.Equal(t, SeverityInfo, deliver(report03259(sem, 9, 5)).Severity)
	assert.Equal(t, SeverityError, deliver(report03259(sem, 5, 1)).Severity, "the earlier signal's record is gone")
	forgetSemaphore(sem)
	assert.Equal(t, SeverityError, deliver(report03259(sem, 9, 5)).Severity, "forgotten")
	assert.Zero(t, sharedSignals.n.Load())
}

func TestNamesHandle(t *testing.T) {
	for _, tc := range []struct {
		text string
		h    uint64
		want bool
	}{
		{"handle = 0x5581c2a0, type", 0x5581c2a0, true},
		{"VkSemaphore 0x5581c2a0[]", 0x5581c2a0, true},
		{"at the end 0x5581c2a0", 0x5581c2a0, true},
		{"VkSemaphore 0x5581c2a0[]", 0x5581c2a, false},
		{"0x5581c2a0f and then 0x5581c2a0.", 0x5581c2a0, true},
		{"no handle", 0x1, false},
	} {
		assert.Equal(t, tc.want, namesHandle(tc.text, tc.h), "%q %#x", tc.text, tc.h)
	}
}

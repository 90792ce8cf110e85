package vk

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Validation reports vkflow can prove false.
//
// The Khronos validation layer (1.3.239, Debian's, and later versions
// with the same semaphore tracking) cannot follow the counter of a timeline
// semaphore that is external: exported with vkGetSemaphoreFdKHR or
// imported. Every vkGetSemaphoreCounterValue (and every successful
// vkWaitSemaphores) on such a semaphore records the value it saw as a host
// signal and retires it at once, except when the layer already holds that
// value as completed: then the "signal" stays in its list of pending
// operations for good (SEMAPHORE_STATE::NotifyAndWait enqueues it,
// SEMAPHORE_STATE::Retire returns early for a payload at or below the
// completed one). The next vkSignalSemaphore of the semaphore is then
// reported as VUID-VkSemaphoreSignalInfo-value-03259, "value (5) must be
// less than value of any pending signal operation (1)", with no signal
// pending anywhere. A host signal of a shared timeline reads the counter
// first (package core), so on a GPU that exports timelines (the NVIDIA
// H200) the first host signal drew it.
//
// SignalSharedSemaphore records, per semaphore, the value signalled and
// the counter's value read before the signal. A report 03259 of that signal
// whose pending value is at or below that counter is false: the counter
// had passed it, so no signal at or below it can be pending. It reaches the
// debug callback as SeverityInfo with its text prefixed to say so, and
// fails no test; a report naming a pending value above the counter (a real
// signal still in flight) passes unchanged.

// vuidSignalBelowPending is the ID of the report described above, and
// signalBelowPending its text's value and pending value (1.3.239:
// "vkSignalSemaphore(): value (5) must be less than value of any pending
// signal operation (1) for semaphore VkSemaphore 0x…[]"; later layers
// write "pSignalInfo->value (5) must be …").
const vuidSignalBelowPending = "VUID-VkSemaphoreSignalInfo-value-03259"

var signalBelowPending = regexp.MustCompile(`\((\d+)\) must be less than value of any pending signal operation \((\d+)\)`)

// hostSignal is the last host signal of a shared semaphore: the value it
// set and the counter's value read before it.
type hostSignal struct{ value, floor uint64 }

var sharedSignals struct {
	mu sync.Mutex
	m  map[Semaphore]hostSignal
	n  atomic.Int32 // len(m), read without the lock by the debug callback
}

// SignalSharedSemaphore is SignalSemaphore for a timeline semaphore that is
// shared with another device, process or API (exported or imported), whose
// counter the caller read as floor (below value) just before. The layer's
// report VUID-VkSemaphoreSignalInfo-value-03259 of this signal naming a
// pending signal at or below floor is false (see falsepos.go) and reaches
// the debug callback as information (KnownFalsePositive).
func (d *Device) SignalSharedSemaphore(s Semaphore, value, floor uint64) error {
	noteHostSignal(s, value, floor)
	return d.SignalSemaphore(s, value)
}

func noteHostSignal(s Semaphore, value, floor uint64) {
	sharedSignals.mu.Lock()
	if sharedSignals.m == nil {
		sharedSignals.m = make(map[Semaphore]hostSignal)
	}
	sharedSignals.m[s] = hostSignal{value, floor}
	sharedSignals.n.Store(int32(len(sharedSignals.m)))
	sharedSignals.mu.Unlock()
}

// forgetSemaphore drops s's record (DestroySemaphore): a later semaphore
// may get the same handle.
func forgetSemaphore(s Semaphore) {
	if sharedSignals.n.Load() == 0 {
		return
	}
	sharedSignals.mu.Lock()
	delete(sharedSignals.m, s)
	sharedSignals.n.Store(int32(len(sharedSignals.m)))
	sharedSignals.mu.Unlock()
}

// KnownFalsePositive reports whether m is a validation report that vkflow
// has proved false, and why: a report VUID-VkSemaphoreSignalInfo-value-03259
// of a host signal made by SignalSharedSemaphore whose pending signal is at
// or below the counter value read before that signal.
func KnownFalsePositive(m Message) (string, bool) {
	if m.ID != vuidSignalBelowPending || sharedSignals.n.Load() == 0 {
		return "", false
	}
	g := signalBelowPending.FindStringSubmatch(m.Text)
	if g == nil {
		return "", false
	}
	value, err1 := strconv.ParseUint(g[1], 10, 64)
	pending, err2 := strconv.ParseUint(g[2], 10, 64)
	if err1 != nil || err2 != nil {
		return "", false
	}
	sharedSignals.mu.Lock()
	defer sharedSignals.mu.Unlock()
	for s, sig := range sharedSignals.m {
		if sig.value == value && pending <= sig.floor && namesHandle(m.Text, uint64(s)) {
			return "the semaphore's counter was at " + strconv.FormatUint(sig.floor, 10) +
				" before this host signal of " + strconv.FormatUint(value, 10) +
				", so no signal of " + strconv.FormatUint(pending, 10) +
				" is pending: the layer's tracking of external timeline semaphores", true
		}
	}
	return "", false
}

// demoteFalsePositive turns a report KnownFalsePositive proves false into
// information that says so.
func demoteFalsePositive(m Message) Message {
	if why, ok := KnownFalsePositive(m); ok {
		m.Severity = SeverityInfo
		m.Text = "vkflow: a validation layer false positive (" + why + "): " + m.Text
	}
	return m
}

// namesHandle reports whether text names handle h as the layer prints
// handles ("0x" and lower-case hex digits, not followed by another hex
// digit).
func namesHandle(text string, h uint64) bool {
	hex := "0x" + strconv.FormatUint(h, 16)
	for {
		i := strings.Index(text, hex)
		if i < 0 {
			return false
		}
		text = text[i+len(hex):]
		if text == "" || !isHexDigit(text[0]) {
			return true
		}
	}
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Package fault injects Vulkan failures in tests. The binding (package vk)
// asks Hit before each injectable call; when a test has armed the call, the
// binding returns the chosen VkResult without calling the driver. Off, Hit
// costs one atomic load.
//
// The plan is process-wide: tests that arm it must not run in parallel with
// other tests that make Vulkan calls.
package fault

import (
	"sync"
	"sync/atomic"
)

// Call names an injectable Vulkan call.
type Call int

// Injectable calls.
const (
	AllocateMemory         Call = iota // vkAllocateMemory
	MapMemory                          // vkMapMemory
	CreateComputePipelines             // vkCreateComputePipelines
	QueueSubmit                        // vkQueueSubmit
	WaitSemaphores                     // vkWaitSemaphores
	EndCommandBuffer                   // vkEndCommandBuffer
	SemaphoreCounterValue              // vkGetSemaphoreCounterValue
	NumCalls
)

var names = [NumCalls]string{"vkAllocateMemory", "vkMapMemory", "vkCreateComputePipelines", "vkQueueSubmit", "vkWaitSemaphores", "vkEndCommandBuffer", "vkGetSemaphoreCounterValue"}

func (c Call) String() string {
	if c < 0 || c >= NumCalls {
		return "fault.Call(?)"
	}
	return names[c]
}

var (
	on   atomic.Bool
	mu   sync.Mutex
	plan struct {
		calls  [NumCalls]int   // calls seen since Start
		failAt [NumCalls]int   // 1-based call to fail; 0 for none
		sticky [NumCalls]bool  // fail every call from failAt on
		result [NumCalls]int32 // the VkResult to return
		fired  [NumCalls]int   // calls failed
	}
)

// Start begins counting injectable calls (and failing the armed ones),
// with every counter at zero and nothing armed.
func Start() {
	mu.Lock()
	defer mu.Unlock()
	plan.calls, plan.failAt, plan.sticky, plan.fired = [NumCalls]int{}, [NumCalls]int{}, [NumCalls]bool{}, [NumCalls]int{}
	on.Store(true)
}

// Stop turns injection off; the counters keep their values.
func Stop() { on.Store(false) }

// Fail makes the n-th call of c counted from Start (1-based) return result
// (a negative VkResult) instead of calling the driver; with sticky, every
// later call of c fails too, as after a real device loss.
func Fail(c Call, n int, result int32, sticky bool) {
	mu.Lock()
	defer mu.Unlock()
	plan.failAt[c], plan.result[c], plan.sticky[c] = n, result, sticky
}

// Calls returns how many calls of c were seen since Start.
func Calls(c Call) int {
	mu.Lock()
	defer mu.Unlock()
	return plan.calls[c]
}

// Fired returns how many calls of c were failed since Start.
func Fired(c Call) int {
	mu.Lock()
	defer mu.Unlock()
	return plan.fired[c]
}

// Hit is called by the binding before call c. It reports whether the call
// must fail, and with which VkResult.
func Hit(c Call) (int32, bool) {
	if !on.Load() {
		return 0, false
	}
	return hit(c)
}

func hit(c Call) (int32, bool) {
	mu.Lock()
	defer mu.Unlock()
	plan.calls[c]++
	n, at := plan.calls[c], plan.failAt[c]
	if at == 0 || n < at || (n > at && !plan.sticky[c]) {
		return 0, false
	}
	plan.fired[c]++
	return plan.result[c], true
}

package vk

/*
#include <stdint.h>
*/
import "C"

import (
	"sync"
	"sync/atomic"
)

// Severity is a VkDebugUtilsMessageSeverityFlagBitsEXT value.
type Severity uint32

// Debug message severities.
const (
	SeverityVerbose Severity = 0x1
	SeverityInfo    Severity = 0x10
	SeverityWarning Severity = 0x100
	SeverityError   Severity = 0x1000
)

func (s Severity) String() string {
	switch {
	case s >= SeverityError:
		return "error"
	case s >= SeverityWarning:
		return "warning"
	case s >= SeverityInfo:
		return "info"
	default:
		return "verbose"
	}
}

// Debug message types (VkDebugUtilsMessageTypeFlagBitsEXT).
const (
	MessageGeneral     uint32 = 0x1
	MessageValidation  uint32 = 0x2
	MessagePerformance uint32 = 0x4
)

// loaderMessageID is the pMessageIdName the Vulkan loader gives its own
// messages (for example, that VK_INSTANCE_LAYERS added a layer).
const loaderMessageID = "Loader Message"

// Message is one message from the VK_EXT_debug_utils messenger, such as a
// validation layer report.
type Message struct {
	Severity Severity
	Types    uint32 // VkDebugUtilsMessageTypeFlagsEXT
	ID       string // pMessageIdName, e.g. "SYNC-HAZARD-READ-AFTER-WRITE"
	Text     string
}

// FromLoader reports whether m is the Vulkan loader's own message (general
// type, ID "Loader Message") rather than a layer's report about the
// application's use of Vulkan.
func (m Message) FromLoader() bool {
	return m.Types&(MessageValidation|MessagePerformance) == 0 && m.ID == loaderMessageID
}

// Debug sinks are registered under an integer token that travels through C
// as the messenger's user data (a Go pointer may not).
var (
	debugSinks sync.Map // uintptr -> func(Message)
	debugNext  atomic.Uintptr
)

func registerDebugSink(f func(Message)) uintptr {
	t := debugNext.Add(1)
	debugSinks.Store(t, f)
	return t
}

func unregisterDebugSink(t uintptr) { debugSinks.Delete(t) }

//export vkflowGoDebug
func vkflowGoDebug(token C.uintptr_t, severity, types C.uint32_t, id, text *C.char) {
	dispatchDebug(uintptr(token), Message{
		Severity: Severity(severity),
		Types:    uint32(types),
		ID:       C.GoString(id),
		Text:     C.GoString(text),
	})
}

// dispatchDebug hands m to the sink registered under token, a report that
// vkflow has proved false as information (falsepos.go).
func dispatchDebug(token uintptr, m Message) {
	f, ok := debugSinks.Load(token)
	if !ok {
		return
	}
	f.(func(Message))(demoteFalsePositive(m))
}

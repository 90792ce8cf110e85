package vk

/*
#include "vk.h"
*/
import "C"

import (
	"errors"
	"strconv"
)

// Result is a VkResult. Negative values are errors.
type Result int32

// VkResult values that vkflow names. Others print as their number.
const (
	Success                    Result = C.VK_SUCCESS
	NotReady                   Result = C.VK_NOT_READY
	Timeout                    Result = C.VK_TIMEOUT
	Incomplete                 Result = C.VK_INCOMPLETE
	ErrorOutOfHostMemory       Result = C.VK_ERROR_OUT_OF_HOST_MEMORY
	ErrorOutOfDeviceMemory     Result = C.VK_ERROR_OUT_OF_DEVICE_MEMORY
	ErrorInitializationFailed  Result = C.VK_ERROR_INITIALIZATION_FAILED
	ErrorDeviceLost            Result = C.VK_ERROR_DEVICE_LOST
	ErrorMemoryMapFailed       Result = C.VK_ERROR_MEMORY_MAP_FAILED
	ErrorLayerNotPresent       Result = C.VK_ERROR_LAYER_NOT_PRESENT
	ErrorExtensionNotPresent   Result = C.VK_ERROR_EXTENSION_NOT_PRESENT
	ErrorFeatureNotPresent     Result = C.VK_ERROR_FEATURE_NOT_PRESENT
	ErrorIncompatibleDriver    Result = C.VK_ERROR_INCOMPATIBLE_DRIVER
	ErrorTooManyObjects        Result = C.VK_ERROR_TOO_MANY_OBJECTS
	ErrorFormatNotSupported    Result = C.VK_ERROR_FORMAT_NOT_SUPPORTED
	ErrorFragmentedPool        Result = C.VK_ERROR_FRAGMENTED_POOL
	ErrorUnknown               Result = C.VK_ERROR_UNKNOWN
	ErrorOutOfPoolMemory       Result = C.VK_ERROR_OUT_OF_POOL_MEMORY
	ErrorInvalidExternalHandle Result = C.VK_ERROR_INVALID_EXTERNAL_HANDLE
	ErrorFragmentation         Result = C.VK_ERROR_FRAGMENTATION
	ErrorInvalidShaderNV       Result = C.VK_ERROR_INVALID_SHADER_NV
)

var resultNames = map[Result]string{
	Success:                    "VK_SUCCESS",
	NotReady:                   "VK_NOT_READY",
	Timeout:                    "VK_TIMEOUT",
	Incomplete:                 "VK_INCOMPLETE",
	ErrorOutOfHostMemory:       "VK_ERROR_OUT_OF_HOST_MEMORY",
	ErrorOutOfDeviceMemory:     "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	ErrorInitializationFailed:  "VK_ERROR_INITIALIZATION_FAILED",
	ErrorDeviceLost:            "VK_ERROR_DEVICE_LOST",
	ErrorMemoryMapFailed:       "VK_ERROR_MEMORY_MAP_FAILED",
	ErrorLayerNotPresent:       "VK_ERROR_LAYER_NOT_PRESENT",
	ErrorExtensionNotPresent:   "VK_ERROR_EXTENSION_NOT_PRESENT",
	ErrorFeatureNotPresent:     "VK_ERROR_FEATURE_NOT_PRESENT",
	ErrorIncompatibleDriver:    "VK_ERROR_INCOMPATIBLE_DRIVER",
	ErrorTooManyObjects:        "VK_ERROR_TOO_MANY_OBJECTS",
	ErrorFormatNotSupported:    "VK_ERROR_FORMAT_NOT_SUPPORTED",
	ErrorFragmentedPool:        "VK_ERROR_FRAGMENTED_POOL",
	ErrorUnknown:               "VK_ERROR_UNKNOWN",
	ErrorOutOfPoolMemory:       "VK_ERROR_OUT_OF_POOL_MEMORY",
	ErrorInvalidExternalHandle: "VK_ERROR_INVALID_EXTERNAL_HANDLE",
	ErrorFragmentation:         "VK_ERROR_FRAGMENTATION",
	ErrorInvalidShaderNV:       "VK_ERROR_INVALID_SHADER_NV",
}

// String returns the Vulkan name of r, such as "VK_ERROR_DEVICE_LOST".
func (r Result) String() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return "VkResult(" + strconv.Itoa(int(r)) + ")"
}

// Error makes a Result usable as an error value; see the sentinels below.
func (r Result) Error() string { return r.String() }

// Sentinels for the results callers act on. Every *Error matches one of
// them with errors.Is when its result does.
var (
	ErrDeviceLost          error = ErrorDeviceLost
	ErrOutOfDeviceMemory   error = ErrorOutOfDeviceMemory
	ErrOutOfHostMemory     error = ErrorOutOfHostMemory
	ErrTimeout             error = Timeout
	ErrNotSupported              = errors.New("vulkan: not supported")
	errNotSupportedResults       = [...]Result{ErrorFeatureNotPresent, ErrorExtensionNotPresent, ErrorLayerNotPresent, ErrorFormatNotSupported, ErrorIncompatibleDriver}
)

// Error is a failed Vulkan call: the call's name and its result.
// It prints as "vkQueueSubmit: VK_ERROR_DEVICE_LOST".
type Error struct {
	Call   string
	Result Result
}

func (e *Error) Error() string { return e.Call + ": " + e.Result.String() }

// Unwrap returns the Result, so errors.Is(err, vk.ErrDeviceLost) works.
func (e *Error) Unwrap() error { return e.Result }

// Is reports whether e matches ErrNotSupported.
func (e *Error) Is(target error) bool {
	if target == ErrNotSupported {
		for _, r := range errNotSupportedResults {
			if e.Result == r {
				return true
			}
		}
	}
	return false
}

// check turns a VkResult into nil or an *Error naming call.
// VK_SUCCESS and the non-error status codes other than VK_TIMEOUT are nil.
func check(call string, r C.VkResult) error {
	if r == C.VK_SUCCESS {
		return nil
	}
	res := Result(r)
	if res > 0 && res != Timeout {
		return nil
	}
	return &Error{Call: call, Result: res}
}

package vk

/*
#include "vk.h"
*/
import "C"

import "github.com/vkflow/vkflow/internal/fault"

// injected reports whether a test made this call of c fail (see package
// internal/fault), and the VkResult to return instead of calling the
// driver. Off, it costs one atomic load.
func injected(c fault.Call) (C.VkResult, bool) {
	r, ok := fault.Hit(c)
	return C.VkResult(r), ok
}

package vk

/*
#cgo CFLAGS: -I${SRCDIR}/include
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "vk.h"

_Static_assert(sizeof(void *) == 8, "vkflow needs a 64-bit platform");
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// ErrNoLoader is wrapped by the error Load returns when libvulkan.so.1
// cannot be opened.
var ErrNoLoader = fmt.Errorf("vulkan: cannot load libvulkan.so.1: %w", ErrNotSupported)

var loadOnce = sync.OnceValue(func() error {
	missing := C.vkflowLoad()
	if missing == nil {
		return nil
	}
	name := C.GoString(missing)
	if name == "libvulkan.so.1" {
		detail := ""
		if e := C.vkflowDlerror(); e != nil {
			detail = ": " + C.GoString(e)
		}
		return fmt.Errorf("%w%s (install libvulkan1)", ErrNoLoader, detail)
	}
	return fmt.Errorf("vulkan: libvulkan.so.1 lacks core function %s: %w", name, ErrNotSupported)
})

// Load opens libvulkan.so.1 and resolves every core function. It runs once
// per process; later calls return the first result.
func Load() error { return loadOnce() }

// Version packing, as VK_MAKE_API_VERSION with variant 0.
func MakeVersion(major, minor, patch uint32) uint32 { return major<<22 | minor<<12 | patch }

// VersionString formats a packed API version as "1.3.239".
func VersionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22&0x7f, v>>12&0x3ff, v&0xfff)
}

// InstanceLayers lists the layers the loader can enable.
func InstanceLayers() ([]string, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var n C.uint32_t
	if err := check("vkEnumerateInstanceLayerProperties", C.vkflowEnumerateInstanceLayers(&n, nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	props := make([]C.VkLayerProperties, n)
	if err := check("vkEnumerateInstanceLayerProperties", C.vkflowEnumerateInstanceLayers(&n, &props[0])); err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for i := range props[:n] {
		out = append(out, C.GoString(&props[i].layerName[0]))
	}
	return out, nil
}

// InstanceExtensions lists the instance extensions the loader offers.
func InstanceExtensions() ([]string, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var n C.uint32_t
	if err := check("vkEnumerateInstanceExtensionProperties", C.vkflowEnumerateInstanceExtensions(&n, nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	props := make([]C.VkExtensionProperties, n)
	if err := check("vkEnumerateInstanceExtensionProperties", C.vkflowEnumerateInstanceExtensions(&n, &props[0])); err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for i := range props[:n] {
		out = append(out, C.GoString(&props[i].extensionName[0]))
	}
	return out, nil
}

// cStrings copies strs into C memory; free releases them.
func cStrings(strs []string) (arr **C.char, free func()) {
	if len(strs) == 0 {
		return nil, func() {}
	}
	p := (**C.char)(C.malloc(C.size_t(len(strs)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	s := unsafe.Slice(p, len(strs))
	for i, v := range strs {
		s[i] = C.CString(v)
	}
	return p, func() {
		for _, c := range s {
			C.free(unsafe.Pointer(c))
		}
		C.free(unsafe.Pointer(p))
	}
}

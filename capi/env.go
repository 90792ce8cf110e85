package main

/*
#include "vkflow.h"
*/
import "C"

import (
	"os"
	"strings"
)

// Go reads the environment once, when the library is loaded; a process that
// sets VKFLOW_DEVICE later (a Dask worker given its device by a plugin) tells
// the library through vkflow_set_device_env.

//export vkflow_set_device_env
func vkflow_set_device_env(value *C.char) C.int {
	if value == nil {
		return fail(os.Unsetenv("VKFLOW_DEVICE"))
	}
	v := C.GoString(value)
	if strings.ContainsRune(v, '=') {
		return invalid("vkflow_set_device_env: value %q contains '='", v)
	}
	if strings.TrimSpace(v) == "" {
		return fail(os.Unsetenv("VKFLOW_DEVICE"))
	}
	return fail(os.Setenv("VKFLOW_DEVICE", v))
}

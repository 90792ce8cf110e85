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
// sets VKFLOW_DEVICE or VKFLOW_WAIT_SPIN later (a Dask worker given its
// device by a plugin, a Python program) tells the library through
// vkflow_set_env (or vkflow_set_device_env).

// envNames are the variables vkflow_set_env sets: those a Manager reads
// when it opens.
var envNames = map[string]bool{"VKFLOW_DEVICE": true, "VKFLOW_WAIT_SPIN": true}

//export vkflow_set_device_env
func vkflow_set_device_env(value *C.char) C.int {
	return setEnv("vkflow_set_device_env", "VKFLOW_DEVICE", value)
}

//export vkflow_set_env
func vkflow_set_env(name, value *C.char) C.int {
	if name == nil {
		return invalid("vkflow_set_env: NULL name")
	}
	n := C.GoString(name)
	if !envNames[n] {
		return invalid("vkflow_set_env: %q is not a variable a Manager reads (VKFLOW_DEVICE, VKFLOW_WAIT_SPIN)", n)
	}
	return setEnv("vkflow_set_env", n, value)
}

// setEnv sets the library's copy of the environment variable name (NULL
// or blank: unset); fn names the C function in errors.
func setEnv(fn, name string, value *C.char) C.int {
	if value == nil {
		return fail(os.Unsetenv(name))
	}
	v := C.GoString(value)
	if strings.ContainsRune(v, '=') {
		return invalid("%s: %s value %q contains '='", fn, name, v)
	}
	if strings.TrimSpace(v) == "" {
		return fail(os.Unsetenv(name))
	}
	return fail(os.Setenv(name, v))
}

package glsl

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shaderc.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"
)

// shaderc compiles in process with libshaderc, opened with dlopen. A
// compiler object serves one call at a time, so calls take one from a pool
// of at most one per CPU. The objects are kept for the process: releasing
// the last one finalizes glslang, and the next compile would rebuild its
// built-in symbol tables (about 200 ms a call instead of 5 ms for a small
// shader; BenchmarkShadercCompiler).
type shaderc struct {
	version string
	slots   chan struct{}
	idle    chan unsafe.Pointer
}

// openShaderc loads libshaderc from the first name that opens. The C side
// keeps one global function table; opening again fills it with the same
// functions.
func openShaderc(primary, fallback string) (*shaderc, error) {
	p, f := C.CString(primary), C.CString(fallback)
	defer C.free(unsafe.Pointer(p))
	defer C.free(unsafe.Pointer(f))
	var pre *C.char
	if path := glslangPath(); path != "" {
		pre = C.CString(path)
		defer C.free(unsafe.Pointer(pre))
	}
	if missing := C.vkflowShadercLoad(pre, p, f); missing != nil {
		if missing == p {
			detail := ""
			if e := C.vkflowShadercDlerror(); e != nil {
				detail = ": " + C.GoString(e)
			}
			return nil, fmt.Errorf("cannot load %s%s", primary, detail)
		}
		return nil, fmt.Errorf("%s lacks %s", primary, C.GoString(missing))
	}
	n := runtime.NumCPU()
	return &shaderc{version: shadercVersion(), slots: make(chan struct{}, n), idle: make(chan unsafe.Pointer, n)}, nil
}

// shadercVersion names the loaded compiler for the cache key: the SPIR-V
// version it reports and the library file's path, size and modification
// time, so that an upgraded libshaderc misses the cache.
func shadercVersion() string {
	var ver, rev C.uint
	C.vkflowShadercSpvVersion(&ver, &rev)
	v := fmt.Sprintf("libshaderc spv %#x.%d", uint32(ver), uint32(rev))
	if p := C.vkflowShadercPath(); p != nil {
		v += " " + fileVersion(C.GoString(p))
	}
	if pre := glslangPath(); pre != "" {
		v += " with " + fileVersion(pre)
	}
	return v
}

func (s *shaderc) String() string  { return "libshaderc" }
func (s *shaderc) Version() string { return s.version }

// Compile runs libshaderc once, with a compiler object no other call is
// using.
func (s *shaderc) Compile(src string, o *options) ([]byte, error) {
	s.slots <- struct{}{}
	defer func() { <-s.slots }()
	var comp unsafe.Pointer
	select {
	case comp = <-s.idle:
	default:
		if comp = newCompiler(); comp == nil {
			return nil, fmt.Errorf("glsl: shaderc_compiler_initialize failed")
		}
	}
	defer func() { s.idle <- comp }() // never blocks: slots bounds the objects
	return compileWith(comp, src, o)
}

// compileWith compiles with the given compiler object.
func compileWith(comp unsafe.Pointer, src string, o *options) ([]byte, error) {
	debug := C.int(0)
	if o.debug {
		debug = 1
	}
	opts := C.vkflowShadercOptionsNew(debug)
	if opts == nil {
		return nil, fmt.Errorf("glsl: shaderc_compile_options_initialize failed")
	}
	defer C.vkflowShadercOptionsFree(opts)
	for _, d := range o.defines {
		C.vkflowShadercDefine(opts, cstr(d.name), C.size_t(len(d.name)), cstr(d.value), C.size_t(len(d.value)))
	}
	name := C.CString(o.name)
	defer C.free(unsafe.Pointer(name))
	res := C.vkflowShadercCompile(comp, cstr(src), C.size_t(len(src)), name, opts)
	runtime.KeepAlive(src)
	runtime.KeepAlive(o)
	if res == nil {
		return nil, fmt.Errorf("glsl: shaderc_compile_into_spv returned no result (out of memory)")
	}
	defer C.vkflowShadercResultFree(res)
	out := C.vkflowShadercResult(res)
	log := ""
	if out.message != nil {
		log = C.GoString(out.message)
	}
	switch out.status {
	case C.VKFLOW_SHADERC_STATUS_SUCCESS:
	case C.VKFLOW_SHADERC_STATUS_COMPILATION_ERROR, C.VKFLOW_SHADERC_STATUS_INVALID_STAGE:
		return nil, parseLog(o.name, log)
	default:
		return nil, fmt.Errorf("glsl: %s: shaderc failed with status %d: %s", o.name, int(out.status), strings.TrimSpace(log))
	}
	if out.length == 0 || out.bytes == nil {
		return nil, fmt.Errorf("glsl: %s: shaderc returned an empty module", o.name)
	}
	return C.GoBytes(unsafe.Pointer(out.bytes), C.int(out.length)), nil
}

// cstr points C at a Go string's bytes for the length of one call; libshaderc
// copies what it keeps.
func cstr(s string) *C.char {
	if s == "" {
		return nil
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s)))
}

// newCompiler and freeCompiler let a benchmark share one compiler object.
func newCompiler() unsafe.Pointer   { return C.vkflowShadercCompilerNew() }
func freeCompiler(c unsafe.Pointer) { C.vkflowShadercCompilerFree(c) }

// glslangPath returns the library to open before libshaderc:
// $VKFLOW_GLSLANG, else the one tools/glslang-lib.sh (make deps) builds in
// the user's cache folder, if it is there; else "".
func glslangPath() string {
	if p := os.Getenv("VKFLOW_GLSLANG"); p != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	p := filepath.Join(dir, "vkflow", "libglslang-vkflow.so")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

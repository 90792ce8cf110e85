package glsl

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/vkflow/vkflow/internal/core"
)

// A backend turns GLSL into SPIR-V. Compile returns the module, a
// *CompileError, or another error when the compiler itself failed.
type backend interface {
	Compile(src string, o *options) ([]byte, error)
	// Version identifies the compiler build for the cache key.
	Version() string
	String() string
}

// compiles counts the modules a backend produced (for tests).
var compiles atomic.Int64

// load picks the compiler once: libshaderc in process, else the glslc
// program. Debian 12's libshaderc1 cannot be opened on its own (it leaves
// glslang's symbols to the program that links it, as glslc does), so there
// glslc is what runs.
var load = sync.OnceValues(func() (backend, error) {
	return pick(func() (backend, error) { return openShaderc("libshaderc.so.1", "libshaderc.so") },
		func() (backend, error) { return findGlslc("glslc") })
})

func pick(shadercOpen, glslcFind func() (backend, error)) (backend, error) {
	s, serr := shadercOpen()
	if serr == nil {
		return s, nil
	}
	g, gerr := glslcFind()
	if gerr == nil {
		slog.Debug("glsl: libshaderc unusable, compiling with glslc", "libshaderc", serr, "glslc", g)
		return g, nil
	}
	return nil, core.Unsupported("glsl: no GLSL compiler: %v; %v (install libshaderc1 or glslc; on Debian, make deps installs libshaderc-dev and glslc)", serr, gerr)
}

// Available reports whether a GLSL compiler could be loaded: libshaderc, or
// else the glslc program on PATH. Its error wraps ErrUnsupported
// (vkflow.ErrUnsupported) and says what to install.
func Available() error {
	_, err := load()
	return err
}

// fileVersion describes a file by its resolved path, size and modification
// time.
func fileVersion(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	fi, err := os.Stat(path)
	if err != nil {
		return path
	}
	return fmt.Sprintf("%s %d %d", path, fi.Size(), fi.ModTime().UnixNano())
}

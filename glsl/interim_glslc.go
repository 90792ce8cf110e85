// Package glsl compiles GLSL compute shaders to SPIR-V at run time.
//
// INTERIM: this file runs the glslc binary until the libshaderc binding
// lands; it is deleted then.
package glsl

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/vkflow/vkflow/internal/core"
)

type options struct{ name string }

// Option configures Compile.
type Option func(*options)

// Name sets the file name used in messages.
func Name(file string) Option { return func(o *options) { o.name = file } }

var cache sync.Map

// Compile compiles src to SPIR-V.
func Compile(src string, opts ...Option) ([]byte, error) {
	o := options{name: "kernel.comp"}
	for _, f := range opts {
		f(&o)
	}
	key := sha256.Sum256([]byte(src))
	if v, ok := cache.Load(key); ok {
		return v.([]byte), nil
	}
	dir, err := os.MkdirTemp("", "glsl")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, o.name)
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command("glslc", "--target-env=vulkan1.2", "-O", "-fshader-stage=compute", in, "-o", filepath.Join(dir, "out.spv"))
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, core.Invalid("glsl: %s", stderr.String())
	}
	code, err := os.ReadFile(filepath.Join(dir, "out.spv"))
	if err != nil {
		return nil, err
	}
	cache.Store(key, code)
	return code, nil
}

package glsl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
)

// TestMain keeps the tests' modules out of the user's cache folder.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vkflow-glsl-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("VKFLOW_SPIRV_CACHE", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// scaleSrc computes o[i] = a[i] * SCALE + OFFSET over N elements.
const scaleSrc = `#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer O { float o[]; };
#ifndef SCALE
#define SCALE 1.0
#endif
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < uint(N)) {
		o[i] = a[i] * SCALE + OFFSET;
	}
}
`

// isolate gives the test an empty disk cache, an empty memory cache and
// the default bounds (restored after the test).
func isolate(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("VKFLOW_SPIRV_CACHE", dir)
	setLimits(t, DefaultCacheMemory, DefaultCacheDisk)
	mem.Lock()
	mem.inflight = nil
	mem.Unlock()
	isolateMemory()
	disk.Lock()
	disk.fresh = false
	disk.Unlock()
	return dir
}

// setLimits sets the cache bounds for the test.
func setLimits(t testing.TB, memBytes, diskBytes int64) {
	t.Helper()
	m, d := CacheLimits()
	t.Cleanup(func() { SetCacheLimits(m, d) })
	SetCacheLimits(memBytes, diskBytes)
}

func requireModule(t *testing.T, code []byte) {
	t.Helper()
	require.True(t, validModule(code), "not a SPIR-V module: %d bytes", len(code))
	assert.Equal(t, uint32(0x00010500), binary.LittleEndian.Uint32(code[4:]), "SPIR-V version")
}

func TestCompile(t *testing.T) {
	require.NoError(t, Available())
	isolate(t)
	defs := []Option{Define("N", "16"), Define("OFFSET", "0.5")}
	tests := []struct {
		name string
		src  string
		opts []Option
		line int
		msg  string // a part of the first error; "" for success
	}{
		{"good shader", scaleSrc, defs, 0, ""},
		{"warning only", "#version 450\n#extension GL_EXT_no_such_thing : warn\nlayout(local_size_x = 1) in;\nvoid main() {}\n", nil, 0, ""},
		{"nil options are skipped", scaleSrc, append([]Option{nil}, defs...), 0, ""},
		{"debug", scaleSrc, append([]Option{Debug()}, defs...), 0, ""},
		{"undeclared identifier", "#version 450\nlayout(local_size_x = 1) in;\nlayout(binding = 0) buffer B { float b[]; };\nvoid main() {\n\tb[0] = x;\n}\n",
			nil, 5, "'x' : undeclared identifier"},
		{"syntax error", "#version 450\nlayout(local_size_x = 1) in;\n\nvoid main() {\n\tfloat y = 1.0\n}\n",
			nil, 6, "syntax error"},
		{"missing #version", "layout(local_size_x = 1) in;\nvoid main() {}\n", nil, 0, "#version"},
		{"undefined macro", scaleSrc, []Option{Define("N", "16")}, 11, "'OFFSET' : undeclared identifier"},
		{"no entry point", "#version 450\nlayout(local_size_x = 1) in;\nvoid other() {}\n", nil, 0, "Missing entry point"},
		{"name in messages", "#version 450\nvoid main() { z = 1; }\n", []Option{Name("my/add.comp")}, 2, "'z' : undeclared identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, err := Compile(tt.src, tt.opts...)
			if tt.msg == "" {
				require.NoError(t, err)
				requireModule(t, code)
				return
			}
			require.Error(t, err)
			assert.Nil(t, code)
			assert.ErrorIs(t, err, core.ErrInvalid)
			var ce *CompileError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.line, ce.Line, ce.Log)
			assert.Contains(t, ce.Message, tt.msg)
			assert.Contains(t, ce.Log, ce.Message)
			name := "kernel.comp"
			if tt.name == "name in messages" {
				name = "my/add.comp"
			}
			assert.Equal(t, name, ce.Name)
			where := name
			if tt.line > 0 {
				where = fmt.Sprintf("%s:%d", name, tt.line)
			}
			assert.Equal(t, "glsl: "+where+": error: "+ce.Message, err.Error())
		})
	}
}

func TestCompileErrorFirstOfMany(t *testing.T) {
	isolate(t)
	src := "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n\tint a = 1.0;\n\tint b = c;\n}\n"
	_, err := Compile(src)
	var ce *CompileError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 4, ce.Line)
	assert.Contains(t, ce.Message, "cannot convert")
	assert.Contains(t, ce.Log, "kernel.comp:5: error: 'c' : undeclared identifier")
}

func TestCompileBadInput(t *testing.T) {
	isolate(t)
	tests := []struct {
		name string
		src  string
		opts []Option
		msg  string
	}{
		{"empty source", "", nil, "empty source"},
		{"blank source", " \n\t", nil, "empty source"},
		{"empty name", scaleSrc, []Option{Name("")}, "empty file name"},
		{"NUL in name", scaleSrc, []Option{Name("a\x00b")}, "NUL"},
		{"macro name not an identifier", scaleSrc, []Option{Define("N M", "1")}, "not an identifier"},
		{"macro name starts with a digit", scaleSrc, []Option{Define("1N", "1")}, "not an identifier"},
		{"empty macro name", scaleSrc, []Option{Define("", "1")}, "not an identifier"},
		{"newline in macro value", scaleSrc, []Option{Define("N", "1\n#define X")}, "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := compiles.Load()
			_, err := Compile(tt.src, tt.opts...)
			require.ErrorIs(t, err, core.ErrInvalid)
			var ce *CompileError
			assert.False(t, errors.As(err, &ce), "a bad argument is not a CompileError")
			assert.Contains(t, err.Error(), tt.msg)
			assert.Equal(t, before, compiles.Load(), "nothing compiled")
		})
	}
}

func TestDefines(t *testing.T) {
	isolate(t)
	base := []Option{Define("N", "16"), Define("OFFSET", "0.5")}
	compileWith := func(opts ...Option) []byte {
		code, err := Compile(scaleSrc, append(append([]Option(nil), base...), opts...)...)
		require.NoError(t, err)
		return code
	}
	plain := compileWith()
	two := compileWith(Define("SCALE", "2.0"))
	three := compileWith(Define("SCALE", "3.0"))
	replaced := compileWith(Define("SCALE", "3.0"), Define("SCALE", "2.0"))
	empty := compileWith(Define("UNUSED", ""))
	assert.NotEqual(t, plain, two)
	assert.NotEqual(t, two, three)
	assert.Equal(t, two, replaced, "a later Define replaces the value")
	assert.Equal(t, plain, empty, "an unused valueless macro changes nothing")
}

func TestCacheMemoryAndDisk(t *testing.T) {
	dir := isolate(t)
	opts := []Option{Define("N", "8"), Define("OFFSET", "1.0")}
	before := compiles.Load()
	first, err := Compile(scaleSrc, opts...)
	require.NoError(t, err)
	assert.Equal(t, before+1, compiles.Load(), "cold: compiled")
	files, err := filepath.Glob(filepath.Join(dir, "*.spv"))
	require.NoError(t, err)
	require.Len(t, files, 1, "written to disk")
	onDisk, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Equal(t, first, onDisk)
	tmp, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	assert.Empty(t, tmp, "no temporary file left")

	first[0] ^= 0xff // the caller's copy is its own
	again, err := Compile(scaleSrc, opts...)
	require.NoError(t, err)
	assert.Equal(t, onDisk, again)
	assert.Equal(t, before+1, compiles.Load(), "memory hit")

	isolateMemory()
	fromDisk, err := Compile(scaleSrc, opts...)
	require.NoError(t, err)
	assert.Equal(t, onDisk, fromDisk)
	assert.Equal(t, before+1, compiles.Load(), "disk hit")

	_, err = Compile(scaleSrc, append(opts, Debug())...)
	require.NoError(t, err)
	assert.Equal(t, before+2, compiles.Load(), "debug is another module")
	files, _ = filepath.Glob(filepath.Join(dir, "*.spv"))
	assert.Len(t, files, 1, "debug modules are not on disk")
}

func isolateMemory() {
	mem.Lock()
	mem.done = nil
	mem.lru.Init()
	mem.bytes = 0
	mem.Unlock()
}

func TestCacheCorruptFile(t *testing.T) {
	opts := []Option{Define("N", "4"), Define("OFFSET", "2.0")}
	isolate(t)
	good, err := Compile(scaleSrc, opts...)
	require.NoError(t, err)
	b, err := load()
	require.NoError(t, err)
	o := options{name: "kernel.comp"}
	for _, opt := range opts {
		opt(&o)
	}
	k := key(b.Version(), scaleSrc, &o)
	tests := []struct {
		name    string
		content func([]byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"truncated mid-word", func(c []byte) []byte { return c[:len(c)-3] }},
		{"short header", func(c []byte) []byte { return c[:16] }},
		{"wrong magic", func(c []byte) []byte {
			c = append([]byte(nil), c...)
			c[0] = 0
			return c
		}},
		{"big-endian magic", func(c []byte) []byte {
			c = append([]byte(nil), c...)
			binary.BigEndian.PutUint32(c, spirvMagic)
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			path := cachePath(dir, k)
			require.NoError(t, os.WriteFile(path, tt.content(good), 0o644))
			before := compiles.Load()
			code, err := Compile(scaleSrc, opts...)
			require.NoError(t, err)
			assert.Equal(t, good, code)
			assert.Equal(t, before+1, compiles.Load(), "the corrupt file is ignored")
			onDisk, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, good, onDisk, "and rewritten")
		})
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv("VKFLOW_SPIRV_CACHE", "/some/where")
	assert.Equal(t, "/some/where", CacheDir())
	t.Setenv("VKFLOW_SPIRV_CACHE", "off")
	assert.Equal(t, "", CacheDir())
	t.Setenv("VKFLOW_SPIRV_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg/cache")
	assert.Equal(t, "/xdg/cache/vkflow/spirv", CacheDir())
}

func TestCacheUnusable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	tests := []struct{ name, dir string }{
		{"off", "off"},
		{"a file, not a folder", file},
		{"below a file", filepath.Join(file, "spirv")},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			t.Setenv("VKFLOW_SPIRV_CACHE", tt.dir)
			src := fmt.Sprintf("%s// variant %d\n", scaleSrc, i)
			before := compiles.Load()
			for range 2 {
				code, err := Compile(src, Define("N", "4"), Define("OFFSET", "2.0"))
				require.NoError(t, err)
				requireModule(t, code)
			}
			assert.Equal(t, before+1, compiles.Load(), "memory still caches")
		})
	}
}

func TestConcurrentCompiles(t *testing.T) {
	isolate(t)
	const workers = 10
	before := compiles.Load()
	results := make([][]byte, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			// Even workers share one source; 1 and 3 another each, 5, 7
			// and 9 a third.
			n := "64"
			switch {
			case i%2 == 0:
			case i < 5:
				n = fmt.Sprint(100 + i)
			default:
				n = "200"
			}
			results[i], errs[i] = Compile(scaleSrc, Define("N", n), Define("OFFSET", "0.0"))
		})
	}
	wg.Wait()
	for i := range results {
		require.NoError(t, errs[i])
		requireModule(t, results[i])
		if i%2 == 0 {
			assert.Equal(t, results[0], results[i])
		}
	}
	assert.Equal(t, results[5], results[9])
	assert.NotEqual(t, results[0], results[1])
	assert.Equal(t, before+4, compiles.Load(), "each source compiled once")
}

func TestConcurrentErrors(t *testing.T) {
	isolate(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Compile("#version 450\nvoid main() { y; }\n") })
	}
	wg.Wait()
	for _, err := range errs {
		var ce *CompileError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, 2, ce.Line)
	}
}

func TestAvailable(t *testing.T) {
	require.NoError(t, Available())
	b, err := load()
	require.NoError(t, err)
	t.Logf("compiler: %s (%s)", b, b.Version())

	_, serr := openShaderc("libvkflow-no-such-shaderc.so.1", "libvkflow-no-such-shaderc.so")
	require.Error(t, serr)
	assert.Contains(t, serr.Error(), "cannot load libvkflow-no-such-shaderc.so.1")
	_, gerr := findGlslc("vkflow-no-such-glslc")
	require.Error(t, gerr)
	assert.Contains(t, gerr.Error(), "no vkflow-no-such-glslc on PATH")

	fails := func(err error) func() (backend, error) { return func() (backend, error) { return nil, err } }
	works := func() (backend, error) { return b, nil }
	_, err = pick(fails(serr), fails(gerr))
	require.ErrorIs(t, err, core.ErrUnsupported)
	for _, part := range []string{serr.Error(), gerr.Error(), "install libshaderc1 or glslc", "make deps"} {
		assert.Contains(t, err.Error(), part)
	}
	got, err := pick(works, fails(gerr))
	require.NoError(t, err)
	assert.Equal(t, b, got)
	got, err = pick(fails(serr), works)
	require.NoError(t, err)
	assert.Equal(t, b, got)
}

func TestParseLog(t *testing.T) {
	tests := []struct {
		name, log, msg string
		line           int
	}{
		{"line", "k.comp:3: error: 'x' : undeclared identifier\n1 error generated.\n", "'x' : undeclared identifier", 3},
		{"no line", "k.comp: error: #version: too old\n1 error generated.\n", "#version: too old", 0},
		{"warning first", "k.comp:2: warning: w\nk.comp:7: error: e\n", "e", 7},
		{"colon in message", "k.comp:4: error: 'a:b' : odd\n", "'a:b' : odd", 4},
		{"unknown form", "\nglslang: internal failure\n", "glslang: internal failure", 0},
		{"empty", "", "compilation failed with no message", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := parseLog("k.comp", tt.log)
			assert.Equal(t, tt.line, e.Line)
			assert.Equal(t, tt.msg, e.Message)
			assert.Equal(t, tt.log, e.Log)
			assert.True(t, strings.HasPrefix(e.Error(), "glsl: k.comp"))
		})
	}
}

package glsl

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	"github.com/vkflow/vkflow/internal/core"
)

// Option changes how Compile compiles.
type Option func(*options)

type define struct{ name, value string }

type options struct {
	name    string
	defines []define
	debug   bool
}

// Name sets the file name used in compiler messages (default "kernel.comp").
func Name(file string) Option { return func(o *options) { o.name = file } }

// Define adds a macro definition, as "#define name value" before the
// source. A later Define of the same name replaces the value.
func Define(name, value string) Option {
	return func(o *options) { o.defines = append(o.defines, define{name, value}) }
}

// Debug compiles without optimization and with debug information (names and
// source lines in the module). Debug modules are cached in memory only.
func Debug() Option { return func(o *options) { o.debug = true } }

// Compile compiles one GLSL compute shader (entry point main) to SPIR-V for
// Vulkan 1.2 (SPIR-V 1.5), optimized for performance.
//
// The source must start with a #version directive (450 or later is usual).
// A shader that does not compile returns a *CompileError with the compiler's
// first message and its line; warnings alone do not fail. Results are cached
// by the SHA-256 of the source, the options and the compiler version, in
// memory and on disk (see CacheDir), so a source compiles once per machine;
// concurrent calls for the same source compile it once. The returned slice
// is the caller's own.
//
// Compile is safe for concurrent use.
func Compile(src string, opts ...Option) ([]byte, error) {
	o := options{name: "kernel.comp"}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if err := o.check(src); err != nil {
		return nil, err
	}
	lib, err := load()
	if err != nil {
		return nil, err
	}
	k := key(lib.Version(), src, &o)
	code, err := cached(k, func() ([]byte, error) { return compileCached(lib, src, &o, k) })
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), code...), nil
}

func (o *options) check(src string) error {
	switch {
	case strings.TrimSpace(src) == "":
		return core.Invalid("glsl: %s: empty source", o.name)
	case o.name == "":
		return core.Invalid("glsl: empty file name")
	case strings.ContainsAny(o.name, "\x00\n"):
		return core.Invalid("glsl: file name %q has a NUL or a newline", o.name)
	}
	for _, d := range o.defines {
		if !identifier(d.name) {
			return core.Invalid("glsl: %s: macro name %q is not an identifier", o.name, d.name)
		}
		if strings.ContainsAny(d.value, "\x00\n\r") {
			return core.Invalid("glsl: %s: macro %s: value %q has a NUL or a line break", o.name, d.name, d.value)
		}
	}
	return nil
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// key is the cache key: SHA-256 over the compiler version, the target, the
// options and the source, each length-prefixed.
func key(version, src string, o *options) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field("vkflow glsl v1: compute, main, vulkan1.2, spirv1.5")
	field(version)
	field(o.name)
	if o.debug {
		field("debug")
	} else {
		field("performance")
	}
	field(strconv.Itoa(len(o.defines)))
	for _, d := range o.defines {
		field(d.name)
		field(d.value)
	}
	field(src)
	return hex.EncodeToString(h.Sum(nil))
}

// mem is the memory cache, least recently used out first, and the compiles
// in flight, by key.
var mem memCache

type memCache struct {
	sync.Mutex
	done     map[string]*list.Element // of *module, in lru
	lru      list.List                // front: the most recently used
	bytes    int64                    // the modules' total size
	inflight map[string]*flight
}

type module struct {
	key  string
	code []byte
}

type flight struct {
	wg   sync.WaitGroup
	code []byte
	err  error
}

// cached returns the module under k from memory, or waits for a compile of
// k in flight, or runs fn once and keeps its successful result within the
// memory bound.
func cached(k string, fn func() ([]byte, error)) ([]byte, error) {
	initLimits()
	mem.Lock()
	if e, ok := mem.done[k]; ok {
		mem.lru.MoveToFront(e)
		mem.Unlock()
		stats.memHits.Add(1)
		return e.Value.(*module).code, nil
	}
	if f, ok := mem.inflight[k]; ok {
		mem.Unlock()
		stats.memHits.Add(1)
		f.wg.Wait()
		return f.code, f.err
	}
	if mem.inflight == nil {
		mem.inflight = make(map[string]*flight)
	}
	f := &flight{}
	f.wg.Add(1)
	mem.inflight[k] = f
	mem.Unlock()
	stats.memMisses.Add(1)

	f.code, f.err = fn()

	mem.Lock()
	delete(mem.inflight, k)
	if f.err == nil {
		mem.add(k, f.code)
	}
	mem.Unlock()
	f.wg.Done()
	return f.code, f.err
}

// add keeps code under k as the most recently used module, then evicts
// down to the bound; a module larger than the bound is not kept. mem is
// locked.
func (m *memCache) add(k string, code []byte) {
	if int64(len(code)) > memLimit.Load() {
		return
	}
	if m.done == nil {
		m.done = make(map[string]*list.Element)
	}
	if e, ok := m.done[k]; ok { // not expected: one flight per key
		m.bytes -= int64(len(e.Value.(*module).code))
		m.lru.Remove(e)
	}
	m.done[k] = m.lru.PushFront(&module{k, code})
	m.bytes += int64(len(code))
	m.trim()
}

// trim evicts the least recently used modules until the total is within
// the bound. mem is locked.
func (m *memCache) trim() {
	for limit := memLimit.Load(); m.bytes > limit; {
		e := m.lru.Back()
		mod := m.lru.Remove(e).(*module)
		delete(m.done, mod.key)
		m.bytes -= int64(len(mod.code))
		stats.memEvictions.Add(1)
	}
}

// compileCached reads the module from the disk cache, or compiles it and
// writes it there (debug modules are never on disk).
func compileCached(b backend, src string, o *options, k string) ([]byte, error) {
	dir := ""
	if !o.debug && diskLimit.Load() > 0 {
		dir = CacheDir()
	}
	if code := readCache(dir, k); code != nil {
		return code, nil
	}
	code, err := b.Compile(src, o)
	if err != nil {
		return nil, err
	}
	compiles.Add(1)
	writeCache(dir, k, code)
	return code, nil
}

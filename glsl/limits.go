package glsl

import (
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// The default cache bounds, in bytes of SPIR-V.
const (
	DefaultCacheMemory = 64 << 20
	DefaultCacheDisk   = 256 << 20
)

// The environment variables that set the bounds at the first Compile.
const (
	envMaxMem  = "VKFLOW_SPIRV_CACHE_MAX_MEM"
	envMaxDisk = "VKFLOW_SPIRV_CACHE_MAX_DISK"
)

// The cache bounds in bytes (0: that level is off), read from the
// environment once, then changed by SetCacheLimits.
var (
	limitsOnce sync.Once
	memLimit   atomic.Int64
	diskLimit  atomic.Int64
)

func initLimits() { limitsOnce.Do(loadLimits) }

// loadLimits sets the bounds from the environment, or the defaults.
func loadLimits() {
	memLimit.Store(envLimit(envMaxMem, DefaultCacheMemory))
	diskLimit.Store(envLimit(envMaxDisk, DefaultCacheDisk))
}

// envLimit returns the byte count in the environment variable name: a
// decimal integer >= 0. Unset or empty gives def; any other value is
// ignored with a Debug message in log/slog's default logger, and gives def.
func envLimit(name string, def int64) int64 {
	s, ok := os.LookupEnv(name)
	if !ok || s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		slog.Debug("glsl: ignoring a bad cache limit: want a byte count >= 0", "var", name, "value", s, "default", def)
		return def
	}
	return n
}

// CacheLimits returns the bounds of the module caches in bytes of SPIR-V:
// memBytes in memory, diskBytes on disk under CacheDir. 0 means that level
// is off.
func CacheLimits() (memBytes, diskBytes int64) {
	initLimits()
	return memLimit.Load(), diskLimit.Load()
}

// SetCacheLimits bounds the module caches: memBytes the modules kept in
// memory, diskBytes the module files under CacheDir, in bytes of SPIR-V. 0
// turns that level off; a negative value leaves it unchanged. It overrides
// VKFLOW_SPIRV_CACHE_MAX_MEM and VKFLOW_SPIRV_CACHE_MAX_DISK. A lower memory
// bound evicts at once; a lower disk bound applies from the next module
// written to disk.
//
// SetCacheLimits is safe for concurrent use.
func SetCacheLimits(memBytes, diskBytes int64) {
	initLimits()
	if memBytes >= 0 {
		mem.Lock()
		memLimit.Store(memBytes)
		mem.trim()
		mem.Unlock()
	}
	if diskBytes >= 0 {
		disk.Lock()
		diskLimit.Store(diskBytes)
		disk.fresh = false
		disk.Unlock()
	}
}

// CacheStats counts the module cache's work since the process started.
type CacheStats struct {
	MemoryHits      int64 // Compile calls served from memory, or by a compile of the same module in flight
	MemoryMisses    int64 // Compile calls that went on to the disk cache or the compiler
	MemoryEvictions int64 // modules dropped from memory to stay within the bound
	MemoryModules   int   // modules in memory now
	MemoryBytes     int64 // their size in bytes now

	DiskHits      int64 // modules read from CacheDir
	DiskMisses    int64 // lookups in CacheDir that found no valid module
	DiskEvictions int64 // files this process deleted from CacheDir to stay within the bound
}

var stats struct {
	memHits, memMisses, memEvictions    atomic.Int64
	diskHits, diskMisses, diskEvictions atomic.Int64
}

// Stats returns the module cache's counters.
//
// Stats is safe for concurrent use.
func Stats() CacheStats {
	mem.Lock()
	n, b := len(mem.done), mem.bytes
	mem.Unlock()
	return CacheStats{
		MemoryHits:      stats.memHits.Load(),
		MemoryMisses:    stats.memMisses.Load(),
		MemoryEvictions: stats.memEvictions.Load(),
		MemoryModules:   n,
		MemoryBytes:     b,
		DiskHits:        stats.diskHits.Load(),
		DiskMisses:      stats.diskMisses.Load(),
		DiskEvictions:   stats.diskEvictions.Load(),
	}
}

// Package glsl compiles GLSL compute shaders to SPIR-V at run time.
//
// Compile turns the source of one compute shader into a SPIR-V module for
// Vulkan 1.2 that algorithm.New accepts:
//
//	code, err := glsl.Compile(src, glsl.Define("T", "float"))
//	if err != nil { ... }  // a *glsl.CompileError names the line
//	algo, err := algorithm.New(m, code, tensors)
//
// The compiler is libshaderc, opened with dlopen at the first call, so the
// package builds and links without it. Where libshaderc cannot be opened on
// its own, the glslc program (the same compiler) runs instead: Debian 12's
// libshaderc1 is such a case, as it leaves glslang's symbols undefined for
// the program that links it. make deps installs both (libshaderc-dev,
// glslc) and links glslang and SPIRV-Tools from Debian's static archives
// into libglslang-vkflow.so in the user's cache folder
// (tools/glslang-lib.sh): that library, or the one the environment variable
// VKFLOW_GLSLANG names, is opened first, globally, and gives libshaderc the
// symbols it lacks. Available says whether either compiler could be
// loaded.
//
// Modules are cached by the SHA-256 of the source, the options and the
// compiler version: in memory for the process, and on disk under CacheDir
// for later processes. A cold compile of a small shader takes about 5 ms
// in process and a few hundred milliseconds with glslc; a cache hit,
// microseconds.
//
// Both caches are bounded in bytes of SPIR-V; 0 turns a level off:
//
//   - memory: VKFLOW_SPIRV_CACHE_MAX_MEM, default 64 MiB
//     (DefaultCacheMemory). The least recently used modules are dropped.
//   - disk: VKFLOW_SPIRV_CACHE_MAX_DISK, default 256 MiB
//     (DefaultCacheDisk). A file's modification time is its last use (a
//     hit refreshes it, at most once a minute). When a write takes the
//     folder over the bound, the least recently used module files are
//     deleted down to 7/8 of it. Processes may share the folder: only
//     module files (64 hex digits and ".spv") count and are deleted, never
//     the temporary files writers rename into place; files another process
//     deleted are skipped. A process lists the folder at its first write,
//     then only when its running estimate of the folder's size goes over
//     the bound or is a minute old, so hits and most writes list nothing.
//
// The variables are decimal byte counts, read once, at the first Compile
// (or CacheLimits or SetCacheLimits); a value that is not a number >= 0 is ignored, with a Debug message in
// log/slog's default logger, and the default applies. SetCacheLimits
// overrides them; CacheLimits returns the bounds in force, and Stats the
// hits, misses and evictions of each level. A module larger than a bound is
// not kept at that level.
//
// The package is safe for concurrent use: concurrent calls for the same
// source compile it once.
package glsl

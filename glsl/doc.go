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
// The package is safe for concurrent use: concurrent calls for the same
// source compile it once.
package glsl

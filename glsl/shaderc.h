// Package glsl's C side: libshaderc opened with dlopen at first use, and
// wrappers over the few functions the package calls. The declarations are
// our own (handles as opaque pointers, enums as the integer values libshaderc
// 2023 documents), so the package builds without the shaderc headers.
#ifndef VKFLOW_SHADERC_H
#define VKFLOW_SHADERC_H

#include <stddef.h>
#include <stdint.h>

// Values of the libshaderc enums the package passes or reads.
enum {
	VKFLOW_SHADERC_COMPUTE_SHADER = 2,        // shaderc_compute_shader
	VKFLOW_SHADERC_TARGET_ENV_VULKAN = 0,     // shaderc_target_env_vulkan
	VKFLOW_SHADERC_ENV_VULKAN_1_2 = (1u << 22) | (2u << 12),
	VKFLOW_SHADERC_SPIRV_1_5 = 0x010500,
	VKFLOW_SHADERC_OPT_ZERO = 0,              // shaderc_optimization_level_zero
	VKFLOW_SHADERC_OPT_PERFORMANCE = 2,       // shaderc_optimization_level_performance
	VKFLOW_SHADERC_STATUS_SUCCESS = 0,
	VKFLOW_SHADERC_STATUS_INVALID_STAGE = 1,
	VKFLOW_SHADERC_STATUS_COMPILATION_ERROR = 2,
};

// Opens the first of the two library names that loads and resolves every
// function. Returns NULL on success, or the name of the missing function
// (a static string), or primary when neither name loads; then
// vkflowShadercDlerror says why.
/* preload, when not NULL, is opened first with RTLD_GLOBAL: a library
 * with the glslang and SPIRV-Tools symbols a libshaderc leaves undefined
 * (Debian 12's does; make deps builds build/libglslang-vkflow.so). */
const char *vkflowShadercLoad(const char *preload, const char *primary, const char *fallback);
const char *vkflowShadercDlerror(void);
// The file libshaderc was loaded from, or NULL.
const char *vkflowShadercPath(void);
void vkflowShadercSpvVersion(unsigned int *version, unsigned int *revision);

void *vkflowShadercCompilerNew(void);
void vkflowShadercCompilerFree(void *compiler);

// Compile options for a Vulkan 1.2 / SPIR-V 1.5 compute shader; debug selects
// no optimization and debug info, else optimization for performance.
void *vkflowShadercOptionsNew(int debug);
void vkflowShadercOptionsFree(void *options);
void vkflowShadercDefine(void *options, const char *name, size_t nameLen, const char *value, size_t valueLen);

// Compiles a compute shader with entry point main. The result is never
// NULL-checked here: a NULL result means libshaderc ran out of memory.
void *vkflowShadercCompile(void *compiler, const char *src, size_t srcLen, const char *name, void *options);

typedef struct {
	int status;
	size_t length;
	const char *bytes;
	const char *message;
} vkflowShadercOutput;
vkflowShadercOutput vkflowShadercResult(void *result);
void vkflowShadercResultFree(void *result);

#endif

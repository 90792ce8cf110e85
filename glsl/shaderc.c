#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include "shaderc.h"

// Function pointer types with our own opaque handles. The libshaderc enums
// are C enums, passed as int (the ABI of every enum it uses).
typedef void *(*vkflowPfnNew)(void);
typedef void (*vkflowPfnFree)(void *); // also the setters that take only the options
typedef void (*vkflowPfnSetInt)(void *, int);
typedef void (*vkflowPfnSetEnv)(void *, int, uint32_t);
typedef void (*vkflowPfnDefine)(void *, const char *, size_t, const char *, size_t);
typedef void *(*vkflowPfnCompile)(void *, const char *, size_t, int, const char *, const char *, void *);
typedef size_t (*vkflowPfnLength)(void *);
typedef int (*vkflowPfnStatus)(void *);
typedef const char *(*vkflowPfnString)(void *);
typedef void (*vkflowPfnSpvVersion)(unsigned int *, unsigned int *);

#define VKFLOW_SHADERC(X) \
	X(compiler_initialize, vkflowPfnNew) \
	X(compiler_release, vkflowPfnFree) \
	X(compile_options_initialize, vkflowPfnNew) \
	X(compile_options_release, vkflowPfnFree) \
	X(compile_options_add_macro_definition, vkflowPfnDefine) \
	X(compile_options_set_generate_debug_info, vkflowPfnFree) \
	X(compile_options_set_optimization_level, vkflowPfnSetInt) \
	X(compile_options_set_target_env, vkflowPfnSetEnv) \
	X(compile_options_set_target_spirv, vkflowPfnSetInt) \
	X(compile_into_spv, vkflowPfnCompile) \
	X(result_release, vkflowPfnFree) \
	X(result_get_length, vkflowPfnLength) \
	X(result_get_compilation_status, vkflowPfnStatus) \
	X(result_get_bytes, vkflowPfnString) \
	X(result_get_error_message, vkflowPfnString) \
	X(get_spv_version, vkflowPfnSpvVersion)

#define X(name, type) type name;
static struct { VKFLOW_SHADERC(X) } sc;
#undef X

static const char *loadError;
static const char *libPath;

const char *vkflowShadercLoad(const char *preload, const char *primary, const char *fallback) {
	if (preload != NULL && dlopen(preload, RTLD_NOW | RTLD_GLOBAL) == NULL) {
		loadError = dlerror();
		return primary;
	}
	void *lib = dlopen(primary, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		lib = dlopen(fallback, RTLD_NOW | RTLD_LOCAL);
	}
	if (lib == NULL) {
		loadError = dlerror();
		return primary;
	}
#define X(name, type) \
	sc.name = (type)dlsym(lib, "shaderc_" #name); \
	if (sc.name == NULL) return "shaderc_" #name;
	VKFLOW_SHADERC(X)
#undef X
	Dl_info info;
	if (dladdr((void *)sc.compile_into_spv, &info) != 0) {
		libPath = info.dli_fname;
	}
	return NULL;
}

const char *vkflowShadercDlerror(void) { return loadError; }
const char *vkflowShadercPath(void) { return libPath; }

void vkflowShadercSpvVersion(unsigned int *version, unsigned int *revision) {
	sc.get_spv_version(version, revision);
}

void *vkflowShadercCompilerNew(void) { return sc.compiler_initialize(); }
void vkflowShadercCompilerFree(void *compiler) { sc.compiler_release(compiler); }

void *vkflowShadercOptionsNew(int debug) {
	void *o = sc.compile_options_initialize();
	if (o == NULL) {
		return NULL;
	}
	sc.compile_options_set_target_env(o, VKFLOW_SHADERC_TARGET_ENV_VULKAN, VKFLOW_SHADERC_ENV_VULKAN_1_2);
	sc.compile_options_set_target_spirv(o, VKFLOW_SHADERC_SPIRV_1_5);
	if (debug) {
		sc.compile_options_set_optimization_level(o, VKFLOW_SHADERC_OPT_ZERO);
		sc.compile_options_set_generate_debug_info(o);
	} else {
		sc.compile_options_set_optimization_level(o, VKFLOW_SHADERC_OPT_PERFORMANCE);
	}
	return o;
}

void vkflowShadercOptionsFree(void *options) { sc.compile_options_release(options); }

void vkflowShadercDefine(void *options, const char *name, size_t nameLen, const char *value, size_t valueLen) {
	sc.compile_options_add_macro_definition(options, name, nameLen, value, valueLen);
}

void *vkflowShadercCompile(void *compiler, const char *src, size_t srcLen, const char *name, void *options) {
	return sc.compile_into_spv(compiler, src, srcLen, VKFLOW_SHADERC_COMPUTE_SHADER, name, "main", options);
}

vkflowShadercOutput vkflowShadercResult(void *result) {
	vkflowShadercOutput out = {
		.status = sc.result_get_compilation_status(result),
		.length = sc.result_get_length(result),
		.bytes = sc.result_get_bytes(result),
		.message = sc.result_get_error_message(result),
	};
	return out;
}

void vkflowShadercResultFree(void *result) { sc.result_release(result); }

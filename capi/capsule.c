// The PyCapsule destructor for vkflow's DLPack capsules. It resolves the
// three Python C API functions it needs when first called, from the
// process that loaded libvkflow.so (the Python interpreter), so the library
// does not link libpython. Python calls it with the GIL held.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include "vkflow.h"
#include "../dlpack/dlpack.h"

static const char *names[] = {"dltensor", "dltensor_versioned", "used_dltensor", "used_dltensor_versioned"};

const char *vkflow_capsule_name(int32_t which) {
	if (which < 0 || which > 3) return NULL;
	return names[which];
}

typedef int (*isValidFn)(void *, const char *);
typedef void *(*getPointerFn)(void *, const char *);

void vkflow_capsule_destructor(void *capsule) {
	static isValidFn isValid;
	static getPointerFn getPointer;
	if (isValid == NULL) {
		isValid = (isValidFn)dlsym(RTLD_DEFAULT, "PyCapsule_IsValid");
		getPointer = (getPointerFn)dlsym(RTLD_DEFAULT, "PyCapsule_GetPointer");
		if (isValid == NULL || getPointer == NULL) return; // not in Python: leak rather than crash
	}
	// A consumed capsule was renamed "used_..."; its consumer owns the
	// deleter call. Only an unconsumed one is deleted here.
	if (isValid(capsule, names[0])) {
		DLManagedTensor *m = getPointer(capsule, names[0]);
		if (m != NULL && m->deleter != NULL) m->deleter(m);
	} else if (isValid(capsule, names[1])) {
		DLManagedTensorVersioned *m = getPointer(capsule, names[1]);
		if (m != NULL && m->deleter != NULL) m->deleter(m);
	}
}

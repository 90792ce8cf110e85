#include <stdlib.h>
#include "dlpack.h"
#include "_cgo_export.h"

static void deleteLegacy(DLManagedTensor *self) { vkflowGoDLPackDeleted(self); }
static void deleteVersioned(DLManagedTensorVersioned *self) { vkflowGoDLPackDeleted(self); }

void vkflowSetDeleter(void *managed, int versioned) {
	if (versioned) {
		((DLManagedTensorVersioned *)managed)->deleter = deleteVersioned;
	} else {
		((DLManagedTensor *)managed)->deleter = deleteLegacy;
	}
}

void vkflowCallDeleter(void *managed, int versioned) {
	if (versioned) {
		DLManagedTensorVersioned *m = managed;
		if (m->deleter != NULL) m->deleter(m);
	} else {
		DLManagedTensor *m = managed;
		if (m->deleter != NULL) m->deleter(m);
	}
}

static int64_t countingDeletes;

static void countLegacy(DLManagedTensor *self) {
	__atomic_add_fetch(&countingDeletes, 1, __ATOMIC_SEQ_CST);
	free(self);
}

static void countVersioned(DLManagedTensorVersioned *self) {
	__atomic_add_fetch(&countingDeletes, 1, __ATOMIC_SEQ_CST);
	free(self);
}

void vkflowSetCountingDeleter(void *managed, int versioned) {
	if (versioned) {
		((DLManagedTensorVersioned *)managed)->deleter = countVersioned;
	} else {
		((DLManagedTensor *)managed)->deleter = countLegacy;
	}
}

int64_t vkflowCountingDeletes(void) { return __atomic_load_n(&countingDeletes, __ATOMIC_SEQ_CST); }

static void keepLegacy(DLManagedTensor *self) {
	(void)self;
	__atomic_add_fetch(&countingDeletes, 1, __ATOMIC_SEQ_CST);
}

static void keepVersioned(DLManagedTensorVersioned *self) {
	(void)self;
	__atomic_add_fetch(&countingDeletes, 1, __ATOMIC_SEQ_CST);
}

void vkflowSetKeepingDeleter(void *managed, int versioned) {
	if (versioned) {
		((DLManagedTensorVersioned *)managed)->deleter = keepVersioned;
	} else {
		((DLManagedTensor *)managed)->deleter = keepLegacy;
	}
}

/* consumer.h: what the consumer's files share (capi/consumer/). */
#ifndef VKFLOW_CONSUMER_H
#define VKFLOW_CONSUMER_H

#include <stdio.h>

#include "vkflow.h"

#define TIMEOUT_NS (10LL * 1000 * 1000 * 1000)

/* The number of failed checks so far. */
extern int failures;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			failures++;                                             \
			fprintf(stderr, "consumer: %s:%d: check failed: %s: ",  \
				__FILE__, __LINE__, #cond);                     \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
		}                                                               \
	} while (0)

/* Checks a vkflow call; on failure prints the library's message. Returns
 * 1 on success. */
int ok(int rc, const char *what);

/* Operators from C (ops.c): matmul on buffers the program owns, a GLSL
 * kernel registered and called by name, a compile error. */
void ops_case(void);

/* Eager op calls from C (eager.c): async chains, writes that wait for
 * queued readers, timeouts, synchronize, the cache counters. */
void eager_case(void);

/* The wire form of a memory handle from C (wire.c): encode, send with the
 * fd over a Unix socket, decode, import; the length and format checks. */
void wire_case(void);

#endif

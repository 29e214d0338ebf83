/*
 * What the parts of the stand-in driver library share (fake_libcuda.c, fake_libcuda_stream.c,
 * fake_libcuda_memory.c): types, configuration from the environment, the call log.
 */
#ifndef FAKE_LIBCUDA_H
#define FAKE_LIBCUDA_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUipcMemHandle_st {
    char reserved[64];
} CUipcMemHandle;

struct fake_function {
    char name[64];
};

static inline long long env_ll(const char *name, long long fallback) {
    const char *v = getenv(name);
    return v && *v ? strtoll(v, NULL, 0) : fallback;
}

static inline void log_line(const char *format, ...) {
    const char *path = getenv("FAKE_CUDA_LOG");
    if (!path || !*path) {
        return;
    }
    FILE *f = fopen(path, "a");
    if (!f) {
        return;
    }
    va_list ap;
    va_start(ap, format);
    vfprintf(f, format, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

static inline int cc(int part) {
    const char *v = getenv("FAKE_CUDA_CC");
    int major = 9, minor = 0;
    if (v && *v) {
        sscanf(v, "%d.%d", &major, &minor);
    }
    return part == 0 ? major : minor;
}

/* Stream memop attributes (fake_libcuda_stream.c): 1 and *value set when the attribute is one of them. */
int fake_stream_attribute(int attribute, int *value);
/* Queues a function on a stream (NULL: the default stream), in order with its other work (fake_libcuda_stream.c). */
void fake_stream_push_fn(void *stream, void (*fn)(void *), void *user);

#endif

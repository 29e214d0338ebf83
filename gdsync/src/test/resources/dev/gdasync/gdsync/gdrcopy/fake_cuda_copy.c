/*
 * The one CUDA driver call that the GPU-word fallback makes and the test stand-in for libcuda.so.1 lacks:
 * cuMemcpyDtoHAsync_v2. The tests preload this library (LD_PRELOAD) into child JVMs that also have the
 * stand-in libcuda.so.1 on LD_LIBRARY_PATH; JCuda's native library binds its symbols lazily and finds this
 * one first, in the global scope. As in fake_libgdrapi.c, a "device address" is a host address.
 *
 * Configuration (environment; defaults in brackets):
 *   FAKE_CUDA_COPY_RESULT   the copy's result, e.g. 700 for CUDA_ERROR_ILLEGAL_ADDRESS [0]
 *   FAKE_CUDA_COPY_FAIL_AFTER  n: the copies after the n-th fail with CUDA_ERROR_ILLEGAL_ADDRESS (700) [never]
 *   FAKE_GDR_LOG            a file that gets one line per copy []
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static long copies;

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, void *stream) {
    const char *v = getenv("FAKE_CUDA_COPY_RESULT");
    const char *after = getenv("FAKE_CUDA_COPY_FAIL_AFTER");
    CUresult result = v && *v ? (CUresult) strtol(v, NULL, 0) : 0;
    copies++;
    if (after && *after && copies > strtol(after, NULL, 0)) {
        result = 700;
    }
    const char *path = getenv("FAKE_GDR_LOG");
    if (path && *path) {
        FILE *f = fopen(path, "a");
        if (f) {
            fprintf(f, "cuMemcpyDtoHAsync 0x%llx %zu stream=%s -> %d\n", src, bytes, stream ? "own" : "null", result);
            fclose(f);
        }
    }
    if (result == 0) {
        memcpy(dst, (const void *) (unsigned long) src, bytes);
    }
    return result;
}

/*
 * Device memory of the stand-in driver library: allocation, copies and CUDA IPC (see fake_libcuda.c for
 * how the tests build and load it).
 *
 * "Device memory" is a shared-memory file mapped into the process: cuMemAlloc_v2 creates a file with a
 * unique name, maps it, and returns the mapping's address as the device pointer. Its IPC handle holds the
 * file's name and size, so that cuIpcOpenMemHandle_v2 in another process maps the same file and both see
 * the same bytes, as two processes sharing GPU memory through CUDA IPC do. Every call that takes a device
 * pointer checks that the range lies inside memory allocated or opened here, and fails with
 * CUDA_ERROR_INVALID_VALUE otherwise, so that a host pointer passed as a device pointer is caught.
 * Asynchronous copies run synchronously and ignore their stream.
 *
 * Configuration (environment; defaults in brackets):
 *   FAKE_CUDA_SHM_DIR            the folder of the device memory files [/dev/shm]
 *   FAKE_CUDA_ALLOC_RESULT       cuMemAlloc_v2's result [0]
 *   FAKE_CUDA_IPC_GET_RESULT     cuIpcGetMemHandle's result [0]
 *   FAKE_CUDA_IPC_OPEN_RESULT    cuIpcOpenMemHandle_v2's result [0]
 *   FAKE_CUDA_MEMCPY_ASYNC_RESULT the result of the cuMemcpy*Async_v2 calls (nothing is copied when not 0) [0]
 * The cuMemcpy*Async_v2 copies check their ranges at once and run in stream order on the stream's thread
 * (fake_libcuda_stream.c), so a cuStreamSynchronize or a later memop of the stream sees them done.
 * Calls logged (FAKE_CUDA_LOG): cuMemAlloc, cuMemFree, cuIpcGetMemHandle, cuIpcOpenMemHandle,
 * cuIpcCloseMemHandle and every copy, each with "pid=<pid>" so that the logs of two processes can share a file.
 */
#include "fake_libcuda.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_MAP_FAILED 205
#define CUDA_ERROR_INVALID_HANDLE 400

#define MAX_MAPPINGS 4096
#define OWN 1
#define OPENED 2

static const char HANDLE_MAGIC[8] = {'F', 'A', 'K', 'E', 'I', 'P', 'C', '1'};

/* The 64 bytes of a handle. */
struct fake_handle {
    char magic[8];
    uint64_t size;
    int32_t pid;
    char name[44];
};

struct mapping {
    uintptr_t base;
    size_t size;
    int kind; /* 0 free, OWN, OPENED */
    char name[44];
};

static struct mapping mappings[MAX_MAPPINGS];
static pthread_mutex_t mappings_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long allocations;

static void file_path(char *path, size_t length, const char *name) {
    const char *dir = getenv("FAKE_CUDA_SHM_DIR");
    snprintf(path, length, "%s/%s", dir && *dir ? dir : "/dev/shm", name);
}

static int add_mapping(uintptr_t base, size_t size, int kind, const char *name) {
    pthread_mutex_lock(&mappings_lock);
    for (int i = 0; i < MAX_MAPPINGS; i++) {
        if (mappings[i].kind == 0) {
            mappings[i].base = base;
            mappings[i].size = size;
            mappings[i].kind = kind;
            snprintf(mappings[i].name, sizeof mappings[i].name, "%s", name);
            pthread_mutex_unlock(&mappings_lock);
            return 1;
        }
    }
    pthread_mutex_unlock(&mappings_lock);
    return 0;
}

/* Removes the mapping that starts at base and has this kind; returns 0 if there is none. */
static int take_mapping(uintptr_t base, int kind, struct mapping *out) {
    pthread_mutex_lock(&mappings_lock);
    for (int i = 0; i < MAX_MAPPINGS; i++) {
        if (mappings[i].kind == kind && mappings[i].base == base) {
            *out = mappings[i];
            mappings[i].kind = 0;
            pthread_mutex_unlock(&mappings_lock);
            return 1;
        }
    }
    pthread_mutex_unlock(&mappings_lock);
    return 0;
}

/* Whether [p, p + n) lies inside one mapping (of the given kind, or of any kind when kind is 0). */
static int inside(CUdeviceptr p, size_t n, int kind, struct mapping *out) {
    int found = 0;
    pthread_mutex_lock(&mappings_lock);
    for (int i = 0; i < MAX_MAPPINGS && !found; i++) {
        struct mapping *m = &mappings[i];
        if (m->kind != 0 && (kind == 0 || m->kind == kind) && p >= m->base && n <= m->size
            && p - m->base <= m->size - n) {
            found = 1;
            if (out) {
                *out = *m;
            }
        }
    }
    pthread_mutex_unlock(&mappings_lock);
    return found;
}

static void *map_file(const char *name, size_t size, int create) {
    char path[512];
    file_path(path, sizeof path, name);
    int fd = open(path, create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
    if (fd < 0) {
        return NULL;
    }
    if (create && ftruncate(fd, (off_t) size) != 0) {
        close(fd);
        unlink(path);
        return NULL;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        if (create) {
            unlink(path);
        }
        return NULL;
    }
    return p;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
    CUresult forced = (CUresult) env_ll("FAKE_CUDA_ALLOC_RESULT", 0);
    if (forced != 0) {
        log_line("cuMemAlloc %llu -> %d pid=%d", (unsigned long long) bytes, forced, (int) getpid());
        return forced;
    }
    if (bytes == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    char name[44];
    pthread_mutex_lock(&mappings_lock);
    unsigned long n = ++allocations;
    pthread_mutex_unlock(&mappings_lock);
    snprintf(name, sizeof name, "fakecuda-%d-%lu", (int) getpid(), n);
    void *p = map_file(name, bytes, 1);
    if (!p) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (!add_mapping((uintptr_t) p, bytes, OWN, name)) {
        munmap(p, bytes);
        char path[512];
        file_path(path, sizeof path, name);
        unlink(path);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *dptr = (CUdeviceptr) (uintptr_t) p;
    log_line("cuMemAlloc 0x%llx %llu pid=%d", (unsigned long long) *dptr, (unsigned long long) bytes, (int) getpid());
    return 0;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
    struct mapping m;
    if (!take_mapping((uintptr_t) dptr, OWN, &m)) {
        log_line("cuMemFree 0x%llx -> invalid pid=%d", (unsigned long long) dptr, (int) getpid());
        return CUDA_ERROR_INVALID_VALUE;
    }
    munmap((void *) m.base, m.size);
    char path[512];
    file_path(path, sizeof path, m.name);
    unlink(path);
    log_line("cuMemFree 0x%llx pid=%d", (unsigned long long) dptr, (int) getpid());
    return 0;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
    if (!inside(dst, n, 0, NULL)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    memset((void *) (uintptr_t) dst, value, n);
    return 0;
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr dptr) {
    struct mapping m;
    if (!inside(dptr, 1, OWN, &m) || m.base != dptr) {
        log_line("cuIpcGetMemHandle 0x%llx -> invalid pid=%d", (unsigned long long) dptr, (int) getpid());
        return CUDA_ERROR_INVALID_VALUE; /* not the base of an allocation */
    }
    CUresult forced = (CUresult) env_ll("FAKE_CUDA_IPC_GET_RESULT", 0);
    log_line("cuIpcGetMemHandle 0x%llx %s -> %d pid=%d", (unsigned long long) dptr, m.name, forced, (int) getpid());
    if (forced != 0) {
        return forced;
    }
    struct fake_handle h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, HANDLE_MAGIC, sizeof h.magic);
    h.size = m.size;
    h.pid = (int32_t) getpid();
    snprintf(h.name, sizeof h.name, "%s", m.name);
    memcpy(handle->reserved, &h, sizeof h);
    return 0;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle handle, unsigned int flags) {
    struct fake_handle h;
    memcpy(&h, handle.reserved, sizeof h);
    h.name[sizeof h.name - 1] = 0;
    if (memcmp(h.magic, HANDLE_MAGIC, sizeof h.magic) != 0) {
        log_line("cuIpcOpenMemHandle (not a handle) pid=%d", (int) getpid());
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (flags != 1) { /* CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS is the one flag */
        log_line("cuIpcOpenMemHandle %s flags=%u -> invalid flags pid=%d", h.name, flags, (int) getpid());
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (h.pid == (int32_t) getpid()) {
        /* The driver maps memory of other processes only. */
        log_line("cuIpcOpenMemHandle %s -> own process pid=%d", h.name, (int) getpid());
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    CUresult forced = (CUresult) env_ll("FAKE_CUDA_IPC_OPEN_RESULT", 0);
    if (forced != 0) {
        log_line("cuIpcOpenMemHandle %s flags=%u -> %d pid=%d", h.name, flags, forced, (int) getpid());
        return forced;
    }
    void *p = map_file(h.name, (size_t) h.size, 0);
    if (!p) {
        log_line("cuIpcOpenMemHandle %s -> map failed pid=%d", h.name, (int) getpid());
        return CUDA_ERROR_MAP_FAILED;
    }
    if (!add_mapping((uintptr_t) p, (size_t) h.size, OPENED, h.name)) {
        munmap(p, (size_t) h.size);
        return CUDA_ERROR_MAP_FAILED;
    }
    *dptr = (CUdeviceptr) (uintptr_t) p;
    log_line("cuIpcOpenMemHandle %s flags=%u -> 0x%llx pid=%d", h.name, flags, (unsigned long long) *dptr, (int) getpid());
    return 0;
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
    struct mapping m;
    if (!take_mapping((uintptr_t) dptr, OPENED, &m)) {
        log_line("cuIpcCloseMemHandle 0x%llx -> invalid pid=%d", (unsigned long long) dptr, (int) getpid());
        return CUDA_ERROR_INVALID_VALUE;
    }
    munmap((void *) m.base, m.size);
    log_line("cuIpcCloseMemHandle 0x%llx %s pid=%d", (unsigned long long) dptr, m.name, (int) getpid());
    return 0;
}

/* Whether the device sides of a copy lie inside allocations; logs the copy either way. */
static int copy_ok(const char *call, void *dst, int dst_device, const void *src, int src_device, size_t n,
                   CUresult result) {
    if ((dst_device && !inside((CUdeviceptr) (uintptr_t) dst, n, 0, NULL))
        || (src_device && !inside((CUdeviceptr) (uintptr_t) src, n, 0, NULL))) {
        log_line("%s 0x%llx 0x%llx %llu -> invalid pointer pid=%d", call, (unsigned long long) (uintptr_t) dst,
                 (unsigned long long) (uintptr_t) src, (unsigned long long) n, (int) getpid());
        return 0;
    }
    log_line("%s 0x%llx 0x%llx %llu -> %d pid=%d", call, (unsigned long long) (uintptr_t) dst,
             (unsigned long long) (uintptr_t) src, (unsigned long long) n, result, (int) getpid());
    return 1;
}

/* A synchronous copy: checks the device ranges, then copies. */
static CUresult copy(const char *call, void *dst, int dst_device, const void *src, int src_device, size_t n) {
    if (!copy_ok(call, dst, dst_device, src, src_device, n, 0)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    memmove(dst, src, n);
    return 0;
}

/* An asynchronous copy queued on its stream: it runs in stream order, after the work queued before it. */
struct queued_copy {
    void *dst;
    const void *src;
    size_t n;
};

static void run_queued_copy(void *user) {
    struct queued_copy *c = user;
    memmove(c->dst, c->src, c->n);
    free(c);
}

static CUresult copy_async(const char *call, void *dst, int dst_device, const void *src, int src_device, size_t n,
                           void *stream) {
    CUresult forced = (CUresult) env_ll("FAKE_CUDA_MEMCPY_ASYNC_RESULT", 0);
    if (!copy_ok(call, dst, dst_device, src, src_device, n, forced)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (forced != 0) {
        return forced;
    }
    struct queued_copy *c = malloc(sizeof *c);
    c->dst = dst;
    c->src = src;
    c->n = n;
    fake_stream_push_fn(stream, run_queued_copy, c);
    return 0;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
    return copy("cuMemcpyHtoD", (void *) (uintptr_t) dst, 1, src, 0, n);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
    return copy("cuMemcpyDtoH", dst, 0, (const void *) (uintptr_t) src, 1, n);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return copy("cuMemcpyDtoD", (void *) (uintptr_t) dst, 1, (const void *) (uintptr_t) src, 1, n);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, void *stream) {
    return copy_async("cuMemcpyHtoDAsync", (void *) (uintptr_t) dst, 1, src, 0, n, stream);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *stream) {
    return copy_async("cuMemcpyDtoHAsync", dst, 0, (const void *) (uintptr_t) src, 1, n, stream);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *stream) {
    return copy_async("cuMemcpyDtoDAsync", (void *) (uintptr_t) dst, 1, (const void *) (uintptr_t) src, 1, n, stream);
}

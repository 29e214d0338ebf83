/*
 * A stand-in for GDRCopy's user library (libgdrapi.so.2), for tests on machines without a GPU or gdrdrv.
 *
 * The tests compile it with gcc into a temporary folder and start child JVMs with that folder on
 * LD_LIBRARY_PATH, so that the project's FFM binding (dev.gdasync.gdsync.gdrcopy) finds it by name and runs
 * every call against these functions.
 *
 * "Device memory" is host memory that the tests get from fake_gdr_device_alloc: a memfd mapped once, at a
 * GPU-page-aligned address that serves as the "device address". gdr_map maps the same pages a second time,
 * at another address, the way the BAR mapping of real GPU memory is a second view of it: a byte written
 * through the mapping is seen at the device address, and the other way round.
 *
 * Deliberately stricter than the real library, so that the tests see mistakes the real one lets through:
 * gdr_pin_buffer refuses an address that is not GPU-page aligned (the real one refuses it in gdr_map),
 * gdr_unpin_buffer refuses a buffer that is still mapped, and the copy functions refuse ranges outside
 * the mapping.
 *
 * Configuration (environment; defaults in brackets):
 *   FAKE_GDR_OPEN_FAIL         1: gdr_open returns NULL, as when the gdrdrv kernel module is not loaded [0]
 *   FAKE_GDR_PIN_RESULT        gdr_pin_buffer's result, e.g. 12 for ENOMEM [0]
 *   FAKE_GDR_MAP_RESULT        gdr_map's result [0]
 *   FAKE_GDR_RUNTIME_VERSION   gdr_runtime_get_version, "major.minor" [2.4; 2.3 in the FAKE_GDR_V1 build]
 *   FAKE_GDR_DRIVER_VERSION    gdr_driver_get_version, "major.minor" [2.4]
 *   FAKE_GDR_MAPPING_TYPE      the mapping type gdr_map creates: 1 write-combined, 2 caching, 3 device [1]
 *   FAKE_GDR_COPY_GATE         a path: the copy functions log "copy waiting", then wait until that file
 *                              exists (60 s at most) before copying, so a test can act while a copy is
 *                              in flight []
 *   FAKE_GDR_LOG               a file that gets one line per call []
 *
 * Built with -DFAKE_GDR_V1 it has the ABI of GDRCopy 2.0 to 2.3: gdr_get_info with the 40-byte info
 * structure and no gdr_get_info_v2. The default build has both, as GDRCopy 2.4 and later do.
 *
 * Test helpers (not GDRCopy functions): fake_gdr_device_alloc, fake_gdr_device_free, fake_gdr_pinned,
 * fake_gdr_mapped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKE_GPU_PAGE_SHIFT 16
#define FAKE_GPU_PAGE_SIZE (1UL << FAKE_GPU_PAGE_SHIFT)
#define FAKE_GPU_PAGE_OFFSET (FAKE_GPU_PAGE_SIZE - 1)
#define FAKE_MAX_ALLOCATIONS 64

typedef struct { unsigned long h; } gdr_mh_t;

/* The info structure of GDRCopy 2.0 to 2.3 (gdr_get_info). */
typedef struct {
    uint64_t va;
    uint64_t mapped_size;
    uint32_t page_size;
    uint64_t tm_cycles;
    uint32_t cycles_per_ms;
    unsigned mapped:1;
    unsigned wc_mapping:1;
} fake_info_v1;

/* The info structure of GDRCopy 2.4 and later (gdr_get_info_v2): the same fields, then the mapping type. */
typedef struct {
    uint64_t va;
    uint64_t mapped_size;
    uint32_t page_size;
    uint64_t tm_cycles;
    uint32_t cycles_per_ms;
    unsigned mapped:1;
    unsigned wc_mapping:1;
    int mapping_type;
} fake_info_v2;

struct allocation {
    unsigned long base;
    size_t size;
    int fd;
};

struct pin {
    unsigned long addr;
    size_t size;
    unsigned long va;
    size_t mapped_size;
    struct allocation *allocation;
    void *map;
    size_t map_size;
    int mapping_type;
    struct pin *next;
};

struct gdr {
    struct pin *pins;
};

typedef struct gdr *gdr_t;

static struct allocation allocations[FAKE_MAX_ALLOCATIONS];

static long long env_ll(const char *name, long long fallback) {
    const char *v = getenv(name);
    return v && *v ? strtoll(v, NULL, 0) : fallback;
}

static void env_version(const char *name, int fallback_major, int fallback_minor, int *major, int *minor) {
    const char *v = getenv(name);
    *major = fallback_major;
    *minor = fallback_minor;
    if (v && *v) {
        sscanf(v, "%d.%d", major, minor);
    }
}

static void log_line(const char *format, ...) {
    const char *path = getenv("FAKE_GDR_LOG");
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

static size_t host_page_round(size_t size) {
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    return (size + page - 1) & ~(page - 1);
}

static struct allocation *allocation_of(unsigned long addr, size_t size) {
    for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
        struct allocation *a = &allocations[i];
        if (a->base != 0 && addr >= a->base && addr - a->base < a->size && size <= a->size - (addr - a->base)) {
            return a;
        }
    }
    return NULL;
}

static struct pin *pin_of(gdr_t g, gdr_mh_t handle) {
    for (struct pin *p = g ? g->pins : NULL; p != NULL; p = p->next) {
        if ((unsigned long) p == handle.h) {
            return p;
        }
    }
    return NULL;
}

static struct pin *pin_anywhere(gdr_mh_t handle) {
    /* The copy functions take no gdr_t. A handle is a pin's address; pins are never freed (an unpinned one
     * keeps allocation == NULL), so a stale handle is recognized instead of read after free. */
    struct pin *p = (struct pin *) handle.h;
    return p != NULL && p->allocation != NULL ? p : NULL;
}

/* ---- test helpers ------------------------------------------------------------------------------------ */

unsigned long fake_gdr_device_alloc(size_t size) {
    size_t rounded = (size + FAKE_GPU_PAGE_OFFSET) & ~FAKE_GPU_PAGE_OFFSET;
    for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
        struct allocation *a = &allocations[i];
        if (a->base != 0) {
            continue;
        }
        int fd = memfd_create("fake-gpu-memory", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t) rounded) != 0) {
            return 0;
        }
        /* Reserve one GPU page more than needed, then place the memfd at the first aligned address. */
        char *reserve = mmap(NULL, rounded + FAKE_GPU_PAGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (reserve == MAP_FAILED) {
            close(fd);
            return 0;
        }
        unsigned long aligned = ((unsigned long) reserve + FAKE_GPU_PAGE_OFFSET) & ~FAKE_GPU_PAGE_OFFSET;
        if (mmap((void *) aligned, rounded, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
            munmap(reserve, rounded + FAKE_GPU_PAGE_SIZE);
            close(fd);
            return 0;
        }
        a->base = aligned;
        a->size = rounded;
        a->fd = fd;
        log_line("fake_gdr_device_alloc 0x%lx %zu", aligned, rounded);
        return aligned;
    }
    return 0;
}

int fake_gdr_device_free(unsigned long addr) {
    for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
        struct allocation *a = &allocations[i];
        if (a->base == addr && addr != 0) {
            munmap((void *) a->base, a->size);
            close(a->fd);
            a->base = 0;
            return 0;
        }
    }
    return EINVAL;
}

int fake_gdr_pinned(gdr_t g) {
    int n = 0;
    for (struct pin *p = g ? g->pins : NULL; p != NULL; p = p->next) {
        n++;
    }
    return n;
}

int fake_gdr_mapped(gdr_t g) {
    int n = 0;
    for (struct pin *p = g ? g->pins : NULL; p != NULL; p = p->next) {
        n += p->map != NULL;
    }
    return n;
}

/* ---- the GDRCopy API --------------------------------------------------------------------------------- */

gdr_t gdr_open(void) {
    if (env_ll("FAKE_GDR_OPEN_FAIL", 0)) {
        log_line("gdr_open NULL");
        return NULL;
    }
    gdr_t g = calloc(1, sizeof(*g));
    log_line("gdr_open");
    return g;
}

int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle);
int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size);

int gdr_close(gdr_t g) {
    if (g == NULL) {
        return EINVAL;
    }
    int pins = fake_gdr_pinned(g);
    int maps = fake_gdr_mapped(g);
    log_line("gdr_close pinned=%d mapped=%d", pins, maps);
    /* Like the real library: whatever is still pinned is unpinned (and, here, unmapped) first. */
    while (g->pins != NULL) {
        struct pin *p = g->pins;
        gdr_mh_t h = { (unsigned long) p };
        if (p->map != NULL) {
            gdr_unmap(g, h, p->map, p->map_size);
        }
        gdr_unpin_buffer(g, h);
    }
    free(g);
    return 0;
}

int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token, uint32_t va_space,
                   gdr_mh_t *handle) {
    int forced = (int) env_ll("FAKE_GDR_PIN_RESULT", 0);
    if (g == NULL || handle == NULL) {
        return EINVAL;
    }
    if (forced != 0) {
        log_line("gdr_pin_buffer 0x%lx %zu -> %d", addr, size, forced);
        return forced;
    }
    if ((addr & FAKE_GPU_PAGE_OFFSET) != 0 || size == 0 || p2p_token != 0 || va_space != 0) {
        log_line("gdr_pin_buffer 0x%lx %zu -> EINVAL (unaligned, empty or tokens)", addr, size);
        return EINVAL;
    }
    size_t mapped_size = (size + FAKE_GPU_PAGE_OFFSET) & ~FAKE_GPU_PAGE_OFFSET;
    struct allocation *a = allocation_of(addr, mapped_size);
    if (a == NULL) {
        log_line("gdr_pin_buffer 0x%lx %zu -> EINVAL (not fake device memory)", addr, size);
        return EINVAL;
    }
    struct pin *p = calloc(1, sizeof(*p));
    p->addr = addr;
    p->size = size;
    p->va = addr;
    p->mapped_size = mapped_size;
    p->allocation = a;
    p->next = g->pins;
    g->pins = p;
    handle->h = (unsigned long) p;
    log_line("gdr_pin_buffer 0x%lx %zu", addr, size);
    return 0;
}

int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle) {
    struct pin *p = pin_of(g, handle);
    if (p == NULL) {
        log_line("gdr_unpin_buffer unknown handle");
        return EINVAL;
    }
    if (p->map != NULL) {
        log_line("gdr_unpin_buffer 0x%lx -> EBUSY (still mapped)", p->addr);
        return EBUSY;
    }
    for (struct pin **q = &g->pins; *q != NULL; q = &(*q)->next) {
        if (*q == p) {
            *q = p->next;
            break;
        }
    }
    log_line("gdr_unpin_buffer 0x%lx", p->addr);
    p->allocation = NULL; /* kept, not freed: see pin_anywhere */
    return 0;
}

int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag) {
    *flag = 0;
    return pin_of(g, handle) ? 0 : EINVAL;
}

static int fill_info(gdr_t g, gdr_mh_t handle, fake_info_v2 *info) {
    struct pin *p = pin_of(g, handle);
    if (p == NULL) {
        return EINVAL;
    }
    info->va = p->va;
    info->mapped_size = p->mapped_size;
    info->page_size = FAKE_GPU_PAGE_SIZE;
    info->tm_cycles = 123456789ULL;
    info->cycles_per_ms = 2400000;
    info->mapped = p->map != NULL;
    info->wc_mapping = p->map != NULL && p->mapping_type == 1;
    info->mapping_type = p->map != NULL ? p->mapping_type : 0;
    return 0;
}

#ifndef FAKE_GDR_V1
int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, fake_info_v2 *info) {
    log_line("gdr_get_info_v2");
    return fill_info(g, handle, info);
}
#endif

int gdr_get_info(gdr_t g, gdr_mh_t handle, fake_info_v1 *info) {
    fake_info_v2 v2;
    log_line("gdr_get_info");
    int rc = fill_info(g, handle, &v2);
    if (rc == 0) {
        info->va = v2.va;
        info->mapped_size = v2.mapped_size;
        info->page_size = v2.page_size;
        info->tm_cycles = v2.tm_cycles;
        info->cycles_per_ms = v2.cycles_per_ms;
        info->mapped = v2.mapped;
        info->wc_mapping = v2.wc_mapping;
    }
    return rc;
}

int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size) {
    struct pin *p = pin_of(g, handle);
    int forced = (int) env_ll("FAKE_GDR_MAP_RESULT", 0);
    if (p == NULL || va == NULL) {
        return EINVAL;
    }
    if (forced != 0) {
        log_line("gdr_map 0x%lx %zu -> %d", p->addr, size, forced);
        return forced;
    }
    if (p->map != NULL) {
        log_line("gdr_map 0x%lx -> EAGAIN (mapped already)", p->addr);
        return EAGAIN;
    }
    if (size == 0 || size > p->mapped_size) {
        log_line("gdr_map 0x%lx %zu -> EINVAL (size)", p->addr, size);
        return EINVAL;
    }
    size_t rounded = host_page_round(size);
    void *m = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, p->allocation->fd,
                   (off_t) (p->va - p->allocation->base));
    if (m == MAP_FAILED) {
        return errno;
    }
    p->map = m;
    p->map_size = rounded;
    p->mapping_type = (int) env_ll("FAKE_GDR_MAPPING_TYPE", 1);
    *va = m;
    log_line("gdr_map 0x%lx %zu", p->addr, size);
    return 0;
}

int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size) {
    struct pin *p = pin_of(g, handle);
    if (p == NULL || p->map == NULL || va != p->map || host_page_round(size) != p->map_size) {
        log_line("gdr_unmap -> EINVAL");
        return EINVAL;
    }
    munmap(p->map, p->map_size);
    p->map = NULL;
    p->map_size = 0;
    log_line("gdr_unmap 0x%lx", p->addr);
    return 0;
}

static void wait_for_gate(void) {
    const char *gate = getenv("FAKE_GDR_COPY_GATE");
    if (!gate || !*gate) {
        return;
    }
    log_line("copy waiting");
    for (int i = 0; i < 60000 && access(gate, F_OK) != 0; i++) {
        usleep(1000);
    }
}

static int check_range(struct pin *p, const void *map_d_ptr, size_t size) {
    if (p == NULL || p->map == NULL) {
        return EINVAL;
    }
    unsigned long start = (unsigned long) p->map;
    unsigned long at = (unsigned long) map_d_ptr;
    return at >= start && at - start <= p->map_size && size <= p->map_size - (at - start) ? 0 : EINVAL;
}

int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size) {
    struct pin *p = pin_anywhere(handle);
    int rc = check_range(p, map_d_ptr, size);
    log_line("gdr_copy_to_mapping +%ld %zu%s", p && p->map ? (long) ((char *) map_d_ptr - (char *) p->map) : -1L, size,
             rc ? " -> EINVAL" : "");
    if (rc == 0) {
        wait_for_gate();
        memcpy(map_d_ptr, h_ptr, size);
    }
    return rc;
}

int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size) {
    struct pin *p = pin_anywhere(handle);
    int rc = check_range(p, map_d_ptr, size);
    log_line("gdr_copy_from_mapping +%ld %zu%s", p && p->map ? (long) ((const char *) map_d_ptr - (char *) p->map) : -1L,
             size, rc ? " -> EINVAL" : "");
    if (rc == 0) {
        wait_for_gate();
        memcpy(h_ptr, map_d_ptr, size);
    }
    return rc;
}

void gdr_runtime_get_version(int *major, int *minor) {
#ifdef FAKE_GDR_V1
    env_version("FAKE_GDR_RUNTIME_VERSION", 2, 3, major, minor);
#else
    env_version("FAKE_GDR_RUNTIME_VERSION", 2, 4, major, minor);
#endif
}

int gdr_driver_get_version(gdr_t g, int *major, int *minor) {
    if (g == NULL) {
        return EINVAL;
    }
    env_version("FAKE_GDR_DRIVER_VERSION", 2, 4, major, minor);
    return 0;
}

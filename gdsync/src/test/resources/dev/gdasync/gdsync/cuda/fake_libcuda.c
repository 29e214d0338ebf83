/*
 * A stand-in for the NVIDIA driver library (libcuda.so.1), for tests on machines without a GPU.
 *
 * The tests compile it with gcc into a temporary folder as libcuda.so.1 and start a child JVM with that
 * folder on LD_LIBRARY_PATH, so that JCuda's native library loads and the project's CUDA code runs its
 * real JCuda calls against these functions. It implements only the entry points the project calls; the
 * JVM binds symbols lazily, so the others are never looked up.
 *
 * Configuration (environment; defaults in brackets):
 *   FAKE_CUDA_INIT_RESULT      cuInit's result, e.g. 100 for CUDA_ERROR_NO_DEVICE [0]
 *   FAKE_CUDA_DRIVER_VERSION   cuDriverGetVersion [12040]
 *   FAKE_CUDA_DEVICES          cuDeviceGetCount [1]
 *   FAKE_CUDA_NAME             device name ["Fake GPU"]
 *   FAKE_CUDA_CC               compute capability ["9.0"]
 *   FAKE_CUDA_SMS              multiprocessors [4]
 *   FAKE_CUDA_COOPERATIVE      CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH [1]
 *   FAKE_CUDA_BLOCKS_PER_SM    cuOccupancyMaxActiveBlocksPerMultiprocessor [2]
 *   FAKE_CUDA_DEVPTR_OFFSET    device pointer = host pointer + this [0]
 *   FAKE_CUDA_REGISTER_RESULT  cuMemHostRegister's result [0]
 *   FAKE_CUDA_MODULE_RESULT    cuModuleLoadData's result [0]
 *   FAKE_CUDA_LAUNCH_STATUS    "code,kind,index": a launch writes this status into its table (first kernel
 *                              parameter), as a failing kernel would []
 *   FAKE_CUDA_LOG              a file that gets one line per call of interest []
 * Streams, events and stream memops, and their variables, are in fake_libcuda_stream.c.
 */
#include "fake_libcuda.h"

CUresult cuInit(unsigned int flags) {
    log_line("cuInit %u", flags);
    return (CUresult) env_ll("FAKE_CUDA_INIT_RESULT", 0);
}

CUresult cuDriverGetVersion(int *version) {
    *version = (int) env_ll("FAKE_CUDA_DRIVER_VERSION", 12040);
    return 0;
}

CUresult cuDeviceGetCount(int *count) {
    *count = (int) env_ll("FAKE_CUDA_DEVICES", 1);
    return 0;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    if (ordinal < 0 || ordinal >= env_ll("FAKE_CUDA_DEVICES", 1)) {
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    }
    *device = ordinal;
    return 0;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
    const char *v = getenv("FAKE_CUDA_NAME");
    snprintf(name, (size_t) length, "%s", v && *v ? v : "Fake GPU");
    return 0;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
    switch (attribute) {
        case 16: *value = (int) env_ll("FAKE_CUDA_SMS", 4); break;          /* MULTIPROCESSOR_COUNT */
        case 41: *value = 1; break;                                          /* UNIFIED_ADDRESSING */
        case 75: *value = cc(0); break;                                      /* COMPUTE_CAPABILITY_MAJOR */
        case 76: *value = cc(1); break;                                      /* COMPUTE_CAPABILITY_MINOR */
        case 91: *value = 1; break;                                          /* CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM */
        case 95: *value = (int) env_ll("FAKE_CUDA_COOPERATIVE", 1); break;  /* COOPERATIVE_LAUNCH */
        default:                                                             /* stream memops: fake_libcuda_stream.c */
            if (!fake_stream_attribute(attribute, value)) {
                *value = 0;
            }
            break;
    }
    return 0;
}

CUresult cuDevicePrimaryCtxRetain(void **context, CUdevice device) {
    *context = (void *) (uintptr_t) (0xC0000 + device);
    log_line("cuDevicePrimaryCtxRetain %d", device);
    return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
    log_line("cuDevicePrimaryCtxRelease %d", device);
    return 0;
}

CUresult cuCtxSetCurrent(void *context) {
    return 0;
}

CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags) {
    log_line("cuMemHostRegister 0x%llx %llu %u", (unsigned long long) (uintptr_t) p, (unsigned long long) bytes, flags);
    return (CUresult) env_ll("FAKE_CUDA_REGISTER_RESULT", 0);
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *device, void *p, unsigned int flags) {
    *device = (CUdeviceptr) (uintptr_t) p + (CUdeviceptr) env_ll("FAKE_CUDA_DEVPTR_OFFSET", 0);
    return 0;
}

CUresult cuMemHostUnregister(void *p) {
    log_line("cuMemHostUnregister 0x%llx", (unsigned long long) (uintptr_t) p);
    return 0;
}

CUresult cuModuleLoadData(void **module, const void *image) {
    char head[9] = {0};
    memcpy(head, image, 8);
    for (int i = 0; i < 8; i++) {
        if (head[i] != 0 && (head[i] < 32 || head[i] > 126)) {
            head[i] = '?';
        }
    }
    log_line("cuModuleLoadData %s", head);
    *module = (void *) (uintptr_t) 0x40000;
    return (CUresult) env_ll("FAKE_CUDA_MODULE_RESULT", 0);
}

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
    struct fake_function *f = calloc(1, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    *function = f;
    return 0;
}

CUresult cuModuleUnload(void *module) {
    log_line("cuModuleUnload");
    return 0;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *function, int block_size, size_t smem) {
    *blocks = (int) env_ll("FAKE_CUDA_BLOCKS_PER_SM", 2);
    log_line("cuOccupancyMaxActiveBlocksPerMultiprocessor %s %d %llu", ((struct fake_function *) function)->name,
             block_size, (unsigned long long) smem);
    return 0;
}

/* Parameter kinds per kernel of docs/ki.md: p pointer, u uint32_t, U uint64_t, i int. */
static const char *signature(const char *name) {
    if (strcmp(name, "gds_ki_pingpong") == 0) {
        return "puuUU";
    }
    if (strcmp(name, "gds_ki_send_templates") == 0) {
        return "ppu";
    }
    if (strcmp(name, "gds_ki_exchange") == 0) {
        return "pppuuU";
    }
    if (strcmp(name, "gds_compute_spin") == 0) {
        return "U";
    }
    if (strcmp(name, "gds_msccl_interpreter") == 0) {
        return "ppppU";
    }
    if (strcmp(name, "gds_shmem_ordering") == 0) {
        return "ppppUuuuip";
    }
    if (strcmp(name, "gds_shmem_fetch_add") == 0) {
        return "ppuip";
    }
    if (strcmp(name, "gds_shmem_ops") == 0) {
        return "puppUpui";
    }
    return "";
}

static CUresult launch(const char *call, void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned smem, void **params) {
    const char *name = ((struct fake_function *) function)->name;
    const char *sig = signature(name);
    char text[512];
    size_t at = 0;
    for (size_t i = 0; sig[i] && at < sizeof text - 32; i++) {
        if (sig[i] == 'u') {
            at += (size_t) snprintf(text + at, sizeof text - at, "%s%u", i ? "," : "", *(uint32_t *) params[i]);
        } else if (sig[i] == 'i') {
            at += (size_t) snprintf(text + at, sizeof text - at, "%s%d", i ? "," : "", *(int32_t *) params[i]);
        } else if (sig[i] == 'U') {
            at += (size_t) snprintf(text + at, sizeof text - at, "%s%llu", i ? "," : "",
                                    (unsigned long long) *(uint64_t *) params[i]);
        } else {
            at += (size_t) snprintf(text + at, sizeof text - at, "%s0x%llx", i ? "," : "",
                                    (unsigned long long) *(uint64_t *) params[i]);
        }
    }
    text[at] = 0;
    log_line("%s %s grid=%u,%u,%u block=%u,%u,%u smem=%u params=%s", call, name, gx, gy, gz, bx, by, bz, smem, text);
    const char *status = getenv("FAKE_CUDA_LAUNCH_STATUS");
    if (status && *status && sig[0] == 'p') {
        uint32_t code = 0, kind = 0, index = 0;
        sscanf(status, "%u,%u,%u", &code, &kind, &index);
        uint64_t device = *(uint64_t *) params[0];
        unsigned char *table = (unsigned char *) (uintptr_t) (device - (uint64_t) env_ll("FAKE_CUDA_DEVPTR_OFFSET", 0));
        memcpy(table + 56, &kind, 4);   /* status_kind */
        memcpy(table + 60, &index, 4);  /* status_index */
        memcpy(table + 52, &code, 4);   /* status_code */
    }
    return 0;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *stream, void **params, void **extra) {
    return launch("cuLaunchKernel", function, gx, gy, gz, bx, by, bz, smem, params);
}

CUresult cuLaunchCooperativeKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned smem, void *stream, void **params) {
    return launch("cuLaunchCooperativeKernel", function, gx, gy, gz, bx, by, bz, smem, params);
}

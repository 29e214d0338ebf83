/*
 * The MSCCL-IR interpreter as a kernel: one CUDA block per thread block of the program (a cooperative launch of
 * the table's ntb blocks, so that every block runs at once and a dependency never waits for an unscheduled block).
 * The table is written by dev.gdasync.libmp.coll.msccl.MscclDeviceTable (docs/msccl.md, "Kernel interpreter") in the
 * layout of dev.gdasync.gdsync.ki.MscclTableLayout, which mirrors the structs and constants below (a test of
 * ki-kernels compiles this header with a host compiler and compares); all addresses in it are byte offsets into one arena (the ranks' buffers, the connections' slots, flags and
 * acknowledgement words, the semaphores), so that a launch on one device can run every rank of a program and a
 * multi-device launch can map peers' regions into the same offsets.
 *
 * Semantics are the host interpreter's (ThreadBlockRunner): the program runs tile by tile; a step with depid waits
 * until the semaphore of that block reaches tile * steps(depid) + deps + 1 (WAIT64 GEQ) and a step with hasdep
 * writes its own (WRITE64); message q of a connection lies in slot (q - 1) % slots, its flag becomes epoch_base + q
 * after the data, and the receiver writes epoch_base + q into the sender's acknowledgement word once done with it;
 * a sender reuses a slot only after the message that used it before was acknowledged. Every wait is bounded by
 * spin_limit polls; a block that gives up writes its step into the table's status and returns.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define GDS_MSCCL_MAGIC 0x4c43534du /* "MSCL" */
#define GDS_MSCCL_VERSION 1u
#define GDS_MSCCL_NONE 0xffffffffffffffffull /* an arena offset that names nothing */

/* gds_msccl_tb.flags */
#define GDS_MSCCL_TB_SENDS 1u    /* the block has a send connection */
#define GDS_MSCCL_TB_RECEIVES 2u /* the block has a receive connection */

/* gds_msccl_header.dtype */
enum gds_msccl_dtype : uint32_t {
    GDS_MSCCL_INT32 = 0, GDS_MSCCL_INT64 = 1, GDS_MSCCL_FLOAT32 = 2, GDS_MSCCL_FLOAT64 = 3
};

/* gds_msccl_header.op (dev.gdasync.gdsync.ki.Reduction's codes) */
enum gds_msccl_op : uint32_t {
    GDS_MSCCL_OP_SUM = 0, GDS_MSCCL_OP_PROD = 1, GDS_MSCCL_OP_MAX = 2, GDS_MSCCL_OP_MIN = 3
};

/* gds_msccl_step.srcbuf and dstbuf */
enum gds_msccl_buffer : uint8_t {
    GDS_MSCCL_BUF_INPUT = 0, GDS_MSCCL_BUF_OUTPUT = 1, GDS_MSCCL_BUF_SCRATCH = 2, GDS_MSCCL_BUF_NONE = 255
};

enum gds_msccl_step_type : uint8_t {
    GDS_MSCCL_SEND = 0, GDS_MSCCL_RECV = 1, GDS_MSCCL_RECV_COPY_SEND = 2, GDS_MSCCL_RECV_REDUCE_SEND = 3,
    GDS_MSCCL_RECV_REDUCE_COPY = 4, GDS_MSCCL_RECV_REDUCE_COPY_SEND = 5, GDS_MSCCL_COPY = 6, GDS_MSCCL_REDUCE = 7,
    GDS_MSCCL_NOP = 8
};

/* 64 bytes. */
struct gds_msccl_header {
    uint32_t magic;
    uint32_t version;       /* GDS_MSCCL_VERSION */
    uint32_t ntb;           /* blocks of the launch */
    uint32_t tiles;
    uint64_t tile_elems;    /* elements of a full tile of one chunk */
    uint64_t chunk_elems;
    uint32_t slots;
    uint32_t slot_bytes;
    uint32_t dtype;         /* gds_msccl_dtype: 0 int32, 1 int64, 2 float32, 3 float64 */
    uint32_t op;            /* gds_msccl_op: 0 sum, 1 prod, 2 max, 3 min */
    uint64_t epoch_base;    /* the run's epoch << 32 */
    uint64_t sem_offset;    /* arena offset of the semaphores: one 64-bit word per block of the launch */
};

/* 96 bytes, one per block of the launch. */
struct gds_msccl_tb {
    uint32_t first_step;    /* index into the step records */
    uint32_t nsteps;
    uint32_t gpu_first;     /* the launch index of block 0 of the same gpu (its depid 0) */
    uint32_t flags;         /* GDS_MSCCL_TB_SENDS | GDS_MSCCL_TB_RECEIVES */
    uint64_t recv_region;   /* this block's receive region: slots, then one flag word per slot */
    uint64_t send_region;   /* the receiving peer block's region */
    uint64_t ack_word;      /* this block's acknowledgement word (the receiver writes it) */
    uint64_t peer_ack_word; /* the sending peer block's acknowledgement word (this block writes it) */
    uint64_t buf[3];        /* the rank's input, output, scratch (by gds_msccl_buffer) */
    uint64_t status;        /* 0, or 1 + the step that gave up, written by the block */
    uint64_t reserved[2];   /* the KI form (the host mirror, MscclKiBlock): send PE u32, receive PE u32, staging u64 */
};

/* 16 bytes. */
struct gds_msccl_step {
    uint8_t type;
    uint8_t srcbuf;         /* gds_msccl_buffer: 0 input, 1 output, 2 scratch, 255 none */
    uint8_t dstbuf;
    uint8_t hasdep;
    uint16_t srcoff;
    uint16_t dstoff;
    uint16_t cnt;
    int16_t depid;
    int16_t deps;
    uint16_t reserved;
};

#ifdef __CUDACC__
/* The device code: compiled by nvcc only (the layout probe includes the structs and constants above). */

__device__ __forceinline__ uint64_t gds_msccl_load(const volatile uint64_t *w) {
    uint64_t v = *w;
    __threadfence_system();
    return v;
}

__device__ __forceinline__ void gds_msccl_store(volatile uint64_t *w, uint64_t v) {
    __threadfence_system();
    *w = v;
}

/* Thread 0 polls until *w >= v (signed difference, as WAIT64 GEQ); false if it gave up. */
__device__ __forceinline__ bool gds_msccl_wait_geq(const volatile uint64_t *w, uint64_t v, uint64_t spin_limit) {
    for (uint64_t i = 0; i < spin_limit; i++) {
        if ((int64_t)(gds_msccl_load(w) - v) >= 0) {
            return true;
        }
        __nanosleep(100);
    }
    return false;
}

/* Floating max/min as libmp's ReduceOp computes them (Java's Math.max/min): a NaN wins and +0 is above -0, so the
 * result does not depend on the order of the operands and equals the host forms' bit for bit. */
template <typename T>
__device__ __forceinline__ T gds_msccl_fmax(T a, T b) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

template <typename T>
__device__ __forceinline__ T gds_msccl_fmin(T a, T b) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}

template <typename T>
__device__ __forceinline__ T gds_msccl_combine(T a, T b, uint32_t op) {
    switch (op) {
        case GDS_MSCCL_OP_SUM: return a + b;
        case GDS_MSCCL_OP_PROD: return a * b;
        case GDS_MSCCL_OP_MAX: return a > b ? a : b;
        default: return a < b ? a : b;
    }
}

template <>
__device__ __forceinline__ float gds_msccl_combine<float>(float a, float b, uint32_t op) {
    switch (op) {
        case GDS_MSCCL_OP_SUM: return a + b;
        case GDS_MSCCL_OP_PROD: return a * b;
        case GDS_MSCCL_OP_MAX: return gds_msccl_fmax(a, b);
        default: return gds_msccl_fmin(a, b);
    }
}

template <>
__device__ __forceinline__ double gds_msccl_combine<double>(double a, double b, uint32_t op) {
    switch (op) {
        case GDS_MSCCL_OP_SUM: return a + b;
        case GDS_MSCCL_OP_PROD: return a * b;
        case GDS_MSCCL_OP_MAX: return gds_msccl_fmax(a, b);
        default: return gds_msccl_fmin(a, b);
    }
}

/* One step on one tile, all threads of the block: piece j of the message is tile t of chunk off + j. */
template <typename T>
__device__ void gds_msccl_execute(const gds_msccl_header *h, const gds_msccl_step *st, uint8_t *arena,
                                  const gds_msccl_tb *tb, uint8_t *in, uint8_t *out, uint64_t tile, uint64_t elems) {
    for (uint32_t j = 0; j < st->cnt; j++) {
        T *src = st->srcbuf == GDS_MSCCL_BUF_NONE ? nullptr
                : (T *)(arena + tb->buf[st->srcbuf]) + (uint64_t)(st->srcoff + j) * h->chunk_elems + tile * h->tile_elems;
        T *dst = st->dstbuf == GDS_MSCCL_BUF_NONE ? nullptr
                : (T *)(arena + tb->buf[st->dstbuf]) + (uint64_t)(st->dstoff + j) * h->chunk_elems + tile * h->tile_elems;
        const T *rin = in == nullptr ? nullptr : (const T *)in + (uint64_t)j * elems;
        T *rout = out == nullptr ? nullptr : (T *)out + (uint64_t)j * elems;
        for (uint64_t i = threadIdx.x; i < elems; i += blockDim.x) {
            switch (st->type) {
                case GDS_MSCCL_SEND: rout[i] = src[i]; break;
                case GDS_MSCCL_RECV: dst[i] = rin[i]; break;
                case GDS_MSCCL_RECV_COPY_SEND: dst[i] = rin[i]; rout[i] = rin[i]; break;
                case GDS_MSCCL_RECV_REDUCE_SEND: rout[i] = gds_msccl_combine<T>(src[i], rin[i], h->op); break;
                case GDS_MSCCL_RECV_REDUCE_COPY: dst[i] = gds_msccl_combine<T>(src[i], rin[i], h->op); break;
                case GDS_MSCCL_RECV_REDUCE_COPY_SEND: {
                    T v = gds_msccl_combine<T>(src[i], rin[i], h->op);
                    dst[i] = v;
                    rout[i] = v;
                    break;
                }
                case GDS_MSCCL_COPY: dst[i] = src[i]; break;
                case GDS_MSCCL_REDUCE: dst[i] = gds_msccl_combine<T>(dst[i], src[i], h->op); break;
                default: break;
            }
        }
    }
}

#endif /* __CUDACC__ */

/* The layout MscclTableLayout (Java) declares: sizes and the offsets the kernel relies on. */
static_assert(sizeof(gds_msccl_header) == 64, "gds_msccl_header is 64 bytes");
static_assert(offsetof(gds_msccl_header, tile_elems) == 16 && offsetof(gds_msccl_header, slots) == 32
              && offsetof(gds_msccl_header, epoch_base) == 48 && offsetof(gds_msccl_header, sem_offset) == 56,
              "gds_msccl_header field offsets");
static_assert(sizeof(gds_msccl_tb) == 96, "gds_msccl_tb is 96 bytes");
static_assert(offsetof(gds_msccl_tb, recv_region) == 16 && offsetof(gds_msccl_tb, peer_ack_word) == 40
              && offsetof(gds_msccl_tb, buf) == 48 && offsetof(gds_msccl_tb, status) == 72,
              "gds_msccl_tb field offsets");
static_assert(sizeof(gds_msccl_step) == 16, "gds_msccl_step is 16 bytes");
static_assert(offsetof(gds_msccl_step, srcoff) == 4 && offsetof(gds_msccl_step, cnt) == 8
              && offsetof(gds_msccl_step, depid) == 10 && offsetof(gds_msccl_step, deps) == 12,
              "gds_msccl_step field offsets");

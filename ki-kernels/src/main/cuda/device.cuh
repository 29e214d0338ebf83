/*
 * gdasync KI device API: the structs of the KI descriptor table and of the KI kernels' arguments, and the
 * device functions with which kernel threads ring prepared sends and wait for completions.
 *
 * Contract: docs/ki.md (device API, kernels, status protocol) and docs/ki-descriptor-table.md (table).
 * The structs mirror the Java layouts byte for byte (dev.gdasync.gdsync.ki.KiTableLayout and
 * dev.gdasync.ki.kernels.KiKernelLayout); a test of ki-kernels compiles this header with a host C++ compiler and
 * compares every offset and size. The struct part is plain C++ that any host compiler accepts; the device
 * functions are compiled only by nvcc (__CUDACC__).
 *
 * Users may include this header in their own kernels and instantiate gds_ki::exchange with their own work
 * (see the Work requirements above gds_ki::exchange).
 */
#ifndef GDASYNC_KI_DEVICE_CUH
#define GDASYNC_KI_DEVICE_CUH

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------------------------------------ */
/* Constants                                                                                              */
/* ------------------------------------------------------------------------------------------------------ */

/** "GKIT" as little-endian bytes. */
#define GDS_KI_MAGIC 0x54494B47u
/** Table layout version. */
#define GDS_KI_VERSION 2

/** Send flag: the request writes a completion. */
#define GDS_KI_SEND_SIGNALED 1u
/** Send flag: a system-scope fence separates the doorbell-record store from the doorbell store. */
#define GDS_KI_SEND_FENCE_SYSTEM 2u
/** Template flag: the work request is an mlx5 WQE (big-endian fields, 32-bit keys). */
#define GDS_KI_TEMPLATE_MLX5 4u
/** A template field offset that names no field (the remote target of an mlx5 SEND). */
#define GDS_KI_FIELD_ABSENT 0xffffu

/** Status and result codes. */
#define GDS_KI_OK 0
#define GDS_KI_TIMEOUT 11
#define GDS_KI_INVALID 22
/** status_code while a failure is being recorded (claimed by compare-and-swap from GDS_KI_OK). */
#define GDS_KI_STATUS_CLAIMED (-1)
/**
 * status_code recorded by the HOST (kind GDS_KI_KIND_NONE, index 0, by the same claim) to abort a running launch:
 * the job failed (a peer's process is gone). Every wait given the table watches the code and returns it.
 */
#define GDS_KI_ABORTED 33
/** At most this many polls of its word between two loads of the table's status_code by a wait. */
#define GDS_KI_ABORT_POLLS 16

/** Status kinds: which entry failed. */
#define GDS_KI_KIND_NONE 0u
#define GDS_KI_KIND_SEND 1u
#define GDS_KI_KIND_WAIT 2u
#define GDS_KI_KIND_TEMPLATE 3u
#define GDS_KI_KIND_BARRIER 4u

/** Wait conditions on a 32-bit word x with operand v. */
#define GDS_KI_COND_GEQ 0u /* (int32_t)(x - v) >= 0 */
#define GDS_KI_COND_EQ 1u  /* x == v */
#define GDS_KI_COND_AND 2u /* (x & v) != 0 */
#define GDS_KI_COND_NOR 3u /* ~(x | v) != 0 */

/** Values of gds_ki_exchange_ctl.arrived. */
#define GDS_KI_ARRIVED_OK 1u
#define GDS_KI_ARRIVED_FAILED 2u

/* ------------------------------------------------------------------------------------------------------ */
/* Descriptor table (docs/ki-descriptor-table.md), little-endian, naturally aligned                        */
/* ------------------------------------------------------------------------------------------------------ */

/** The table header (64 bytes). The status fields are written by the table's executor. */
typedef struct gds_ki_table_header {
    uint32_t magic;
    uint16_t version;
    uint16_t header_bytes;
    uint32_t send_count;
    uint32_t wait_count;
    uint32_t send_offset;
    uint32_t wait_offset;
    uint32_t send_entry_bytes;
    uint32_t wait_entry_bytes;
    uint64_t total_bytes;
    uint32_t template_count;
    uint32_t template_offset;
    uint32_t template_entry_bytes;
    int32_t status_code;
    uint32_t status_kind;
    uint32_t status_index;
} gds_ki_table_header;

/** A send entry (32 bytes): the two stores that ring a prepared send. */
typedef struct gds_ki_send {
    uint64_t dbrec_addr;
    uint32_t dbrec_value;
    uint32_t flags;
    uint64_t db_addr;
    uint64_t db_value;
} gds_ki_send;

/** A wait entry (32 bytes): the word to wait on, and the flag that releases a CQE once it passed. */
typedef struct gds_ki_wait {
    uint64_t word_addr;
    uint32_t value;
    uint32_t cond;
    uint64_t flag_addr;
    uint32_t flag_value;
    uint32_t reserved;
} gds_ki_wait;

/** A template entry (64 bytes): a prepared send whose buffer, length and remote target are patched. */
typedef struct gds_ki_template {
    uint64_t wqe_addr;
    uint64_t dbrec_addr;
    uint32_t dbrec_value;
    uint32_t flags;
    uint64_t db_addr;
    uint64_t db_value;
    uint16_t off_sge_addr;
    uint16_t off_sge_lkey;
    uint16_t off_sge_length;
    uint16_t off_total_length;
    uint16_t off_remote_addr;
    uint16_t off_rkey;
    uint8_t reserved[12];
} gds_ki_template;

/* ------------------------------------------------------------------------------------------------------ */
/* Kernel arguments (docs/ki.md, "Layouts besides the table")                                              */
/* ------------------------------------------------------------------------------------------------------ */

/** The exchange kernel's control block; all zero at launch. */
typedef struct gds_ki_exchange_ctl {
    uint32_t role;      /* role counter: arrival order of the blocks */
    uint32_t chunk;     /* interior chunk counter */
    uint32_t arrived;   /* barrier word: 0, GDS_KI_ARRIVED_OK or GDS_KI_ARRIVED_FAILED */
    uint32_t next_send; /* the next send entry to ring, in table order */
} gds_ki_exchange_ctl;

/** A copy of bytes from src to dst (executor addresses). */
typedef struct gds_ki_copy {
    uint64_t src;
    uint64_t dst;
    uint64_t bytes;
} gds_ki_copy;

/** The exchange kernel's copy work. */
typedef struct gds_ki_exchange_work {
    uint64_t pack;            /* const gds_ki_copy[send_count], or 0: nothing to pack */
    uint64_t unpack;          /* const gds_ki_copy[unpack_count] */
    uint64_t interior;        /* const gds_ki_copy *, split into interior_chunks parts, or 0 */
    uint32_t unpack_count;
    uint32_t interior_chunks;
    uint64_t interior_ns;     /* busy time after each interior chunk */
} gds_ki_exchange_work;

/** The dynamic fields of one templated send (NIC addresses and keys, not device pointers). */
typedef struct gds_ki_template_args {
    uint64_t laddr;
    uint64_t lkey;
    uint64_t raddr;
    uint64_t rkey;
    uint32_t length;
    uint32_t reserved;
} gds_ki_template_args;

/* The layouts are the Java ones: any change here must be made there (and the version bumped). */
#define GDS_KI_CHECK_FIELD(T, f, off) static_assert(offsetof(T, f) == (off), #T "." #f " moved")
static_assert(sizeof(gds_ki_table_header) == 64, "gds_ki_table_header is 64 bytes");
GDS_KI_CHECK_FIELD(gds_ki_table_header, magic, 0);
GDS_KI_CHECK_FIELD(gds_ki_table_header, version, 4);
GDS_KI_CHECK_FIELD(gds_ki_table_header, header_bytes, 6);
GDS_KI_CHECK_FIELD(gds_ki_table_header, send_count, 8);
GDS_KI_CHECK_FIELD(gds_ki_table_header, wait_count, 12);
GDS_KI_CHECK_FIELD(gds_ki_table_header, send_offset, 16);
GDS_KI_CHECK_FIELD(gds_ki_table_header, wait_offset, 20);
GDS_KI_CHECK_FIELD(gds_ki_table_header, send_entry_bytes, 24);
GDS_KI_CHECK_FIELD(gds_ki_table_header, wait_entry_bytes, 28);
GDS_KI_CHECK_FIELD(gds_ki_table_header, total_bytes, 32);
GDS_KI_CHECK_FIELD(gds_ki_table_header, template_count, 40);
GDS_KI_CHECK_FIELD(gds_ki_table_header, template_offset, 44);
GDS_KI_CHECK_FIELD(gds_ki_table_header, template_entry_bytes, 48);
GDS_KI_CHECK_FIELD(gds_ki_table_header, status_code, 52);
GDS_KI_CHECK_FIELD(gds_ki_table_header, status_kind, 56);
GDS_KI_CHECK_FIELD(gds_ki_table_header, status_index, 60);

static_assert(sizeof(gds_ki_send) == 32, "gds_ki_send is 32 bytes");
GDS_KI_CHECK_FIELD(gds_ki_send, dbrec_addr, 0);
GDS_KI_CHECK_FIELD(gds_ki_send, dbrec_value, 8);
GDS_KI_CHECK_FIELD(gds_ki_send, flags, 12);
GDS_KI_CHECK_FIELD(gds_ki_send, db_addr, 16);
GDS_KI_CHECK_FIELD(gds_ki_send, db_value, 24);

static_assert(sizeof(gds_ki_wait) == 32, "gds_ki_wait is 32 bytes");
GDS_KI_CHECK_FIELD(gds_ki_wait, word_addr, 0);
GDS_KI_CHECK_FIELD(gds_ki_wait, value, 8);
GDS_KI_CHECK_FIELD(gds_ki_wait, cond, 12);
GDS_KI_CHECK_FIELD(gds_ki_wait, flag_addr, 16);
GDS_KI_CHECK_FIELD(gds_ki_wait, flag_value, 24);
GDS_KI_CHECK_FIELD(gds_ki_wait, reserved, 28);

static_assert(sizeof(gds_ki_template) == 64, "gds_ki_template is 64 bytes");
GDS_KI_CHECK_FIELD(gds_ki_template, wqe_addr, 0);
GDS_KI_CHECK_FIELD(gds_ki_template, dbrec_addr, 8);
GDS_KI_CHECK_FIELD(gds_ki_template, dbrec_value, 16);
GDS_KI_CHECK_FIELD(gds_ki_template, flags, 20);
GDS_KI_CHECK_FIELD(gds_ki_template, db_addr, 24);
GDS_KI_CHECK_FIELD(gds_ki_template, db_value, 32);
GDS_KI_CHECK_FIELD(gds_ki_template, off_sge_addr, 40);
GDS_KI_CHECK_FIELD(gds_ki_template, off_sge_lkey, 42);
GDS_KI_CHECK_FIELD(gds_ki_template, off_sge_length, 44);
GDS_KI_CHECK_FIELD(gds_ki_template, off_total_length, 46);
GDS_KI_CHECK_FIELD(gds_ki_template, off_remote_addr, 48);
GDS_KI_CHECK_FIELD(gds_ki_template, off_rkey, 50);
GDS_KI_CHECK_FIELD(gds_ki_template, reserved, 52);

static_assert(sizeof(gds_ki_exchange_ctl) == 16, "gds_ki_exchange_ctl is 16 bytes");
GDS_KI_CHECK_FIELD(gds_ki_exchange_ctl, role, 0);
GDS_KI_CHECK_FIELD(gds_ki_exchange_ctl, chunk, 4);
GDS_KI_CHECK_FIELD(gds_ki_exchange_ctl, arrived, 8);
GDS_KI_CHECK_FIELD(gds_ki_exchange_ctl, next_send, 12);

static_assert(sizeof(gds_ki_copy) == 24, "gds_ki_copy is 24 bytes");
GDS_KI_CHECK_FIELD(gds_ki_copy, src, 0);
GDS_KI_CHECK_FIELD(gds_ki_copy, dst, 8);
GDS_KI_CHECK_FIELD(gds_ki_copy, bytes, 16);

static_assert(sizeof(gds_ki_exchange_work) == 40, "gds_ki_exchange_work is 40 bytes");
GDS_KI_CHECK_FIELD(gds_ki_exchange_work, pack, 0);
GDS_KI_CHECK_FIELD(gds_ki_exchange_work, unpack, 8);
GDS_KI_CHECK_FIELD(gds_ki_exchange_work, interior, 16);
GDS_KI_CHECK_FIELD(gds_ki_exchange_work, unpack_count, 24);
GDS_KI_CHECK_FIELD(gds_ki_exchange_work, interior_chunks, 28);
GDS_KI_CHECK_FIELD(gds_ki_exchange_work, interior_ns, 32);

static_assert(sizeof(gds_ki_template_args) == 40, "gds_ki_template_args is 40 bytes");
GDS_KI_CHECK_FIELD(gds_ki_template_args, laddr, 0);
GDS_KI_CHECK_FIELD(gds_ki_template_args, lkey, 8);
GDS_KI_CHECK_FIELD(gds_ki_template_args, raddr, 16);
GDS_KI_CHECK_FIELD(gds_ki_template_args, rkey, 24);
GDS_KI_CHECK_FIELD(gds_ki_template_args, length, 32);
GDS_KI_CHECK_FIELD(gds_ki_template_args, reserved, 36);
#undef GDS_KI_CHECK_FIELD

/* ------------------------------------------------------------------------------------------------------ */
/* Device functions                                                                                       */
/* ------------------------------------------------------------------------------------------------------ */
#ifdef __CUDACC__

namespace gds_ki {

/* ---- memory access ----------------------------------------------------------------------------------- */

/** The GPU's global nanosecond timer. */
__device__ __forceinline__ uint64_t now_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/** A relaxed system-scope 32-bit load: never served from a stale cache line (the word is written by the NIC or the CPU). */
__device__ __forceinline__ uint32_t load_relaxed_sys(const void *addr) {
    uint32_t v;
    asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(addr) : "memory");
    return v;
}

/** An acquire system-scope 32-bit load: later loads and stores of this thread are ordered after it. */
__device__ __forceinline__ uint32_t load_acquire_sys(const void *addr) {
    uint32_t v;
    asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(addr) : "memory");
    return v;
}

/** A release system-scope 32-bit store: earlier loads and stores of this thread are ordered before it. */
__device__ __forceinline__ void store_release_sys(void *addr, uint32_t v) {
    asm volatile("st.release.sys.u32 [%0], %1;" : : "l"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ void store32(uint64_t addr, uint32_t v) {
    *reinterpret_cast<volatile uint32_t *>(addr) = v;
}

__device__ __forceinline__ void store64(uint64_t addr, uint64_t v) {
    *reinterpret_cast<volatile uint64_t *>(addr) = v;
}

/** Stores the low `bytes` bytes of v little-endian at addr, in one store when addr is aligned for it. */
__device__ __forceinline__ void store_le(uint64_t addr, uint64_t v, unsigned bytes) {
    if ((addr & (bytes - 1)) == 0) {
        if (bytes == 8) {
            store64(addr, v);
        } else {
            store32(addr, static_cast<uint32_t>(v));
        }
        return;
    }
    volatile uint8_t *p = reinterpret_cast<volatile uint8_t *>(addr);
    for (unsigned b = 0; b < bytes; b++) {
        p[b] = static_cast<uint8_t>(v >> (8 * b));
    }
}

/** Stores the low `bytes` bytes of v big-endian at addr (an mlx5 WQE field), in one store when addr is aligned. */
__device__ __forceinline__ void store_be(uint64_t addr, uint64_t v, unsigned bytes) {
    if (bytes == 8) {
        store_le(addr, __byte_perm(static_cast<uint32_t>(v >> 32), 0, 0x0123)
                           | (static_cast<uint64_t>(__byte_perm(static_cast<uint32_t>(v), 0, 0x0123)) << 32), 8);
    } else {
        store_le(addr, __byte_perm(static_cast<uint32_t>(v), 0, 0x0123), 4);
    }
}

/** Stores a template field unless its offset names none. */
__device__ __forceinline__ void store_field(uint64_t wqe, uint32_t off, uint64_t v, unsigned bytes, bool big_endian) {
    if (off == GDS_KI_FIELD_ABSENT) {
        return;
    }
    if (big_endian) {
        store_be(wqe + off, v, bytes);
    } else {
        store_le(wqe + off, v, bytes);
    }
}

/** a * b, saturated at UINT64_MAX: the bound of a wait on many waits never wraps to a short one. */
__device__ __forceinline__ uint64_t saturating_mul(uint64_t a, uint64_t b) {
    return (b != 0 && a > UINT64_MAX / b) ? UINT64_MAX : a * b;
}

/** Busy work of a fixed length on the global timer (emulated compute). */
__device__ __forceinline__ void spin_ns(uint64_t ns) {
    if (ns == 0) {
        return;
    }
    uint64_t start = now_ns();
    while (now_ns() - start < ns) {
    }
}

/* ---- table ------------------------------------------------------------------------------------------- */

/**
 * GDS_KI_INVALID unless magic, version, header and entry sizes are this header's, and the table is 8-byte
 * aligned with its entries aligned and inside total_bytes (so that no entry access can fault).
 */
__device__ __forceinline__ int check_table(const gds_ki_table_header *t) {
    if (t == nullptr || (reinterpret_cast<uintptr_t>(t) & 7) != 0 || t->magic != GDS_KI_MAGIC || t->version != GDS_KI_VERSION
        || t->header_bytes != sizeof(gds_ki_table_header) || t->send_entry_bytes != sizeof(gds_ki_send)
        || t->wait_entry_bytes != sizeof(gds_ki_wait) || t->template_entry_bytes != sizeof(gds_ki_template)) {
        return GDS_KI_INVALID;
    }
    uint64_t total = t->total_bytes;
    if (((t->send_offset | t->wait_offset | t->template_offset) & 7) != 0
        || t->send_offset < t->header_bytes || t->wait_offset < t->header_bytes || t->template_offset < t->header_bytes
        || t->send_offset + uint64_t(t->send_count) * sizeof(gds_ki_send) > total
        || t->wait_offset + uint64_t(t->wait_count) * sizeof(gds_ki_wait) > total
        || t->template_offset + uint64_t(t->template_count) * sizeof(gds_ki_template) > total) {
        return GDS_KI_INVALID;
    }
    return GDS_KI_OK;
}

/** Send entry i (no bounds check: i < send_count). */
__device__ __forceinline__ const gds_ki_send *send_entry(const gds_ki_table_header *t, uint32_t i) {
    return reinterpret_cast<const gds_ki_send *>(reinterpret_cast<const char *>(t) + t->send_offset
                                                 + uint64_t(i) * t->send_entry_bytes);
}

/** Wait entry i (no bounds check: i < wait_count). */
__device__ __forceinline__ const gds_ki_wait *wait_entry(const gds_ki_table_header *t, uint32_t i) {
    return reinterpret_cast<const gds_ki_wait *>(reinterpret_cast<const char *>(t) + t->wait_offset
                                                 + uint64_t(i) * t->wait_entry_bytes);
}

/** Template entry i (no bounds check: i < template_count). */
__device__ __forceinline__ const gds_ki_template *template_entry(const gds_ki_table_header *t, uint32_t i) {
    return reinterpret_cast<const gds_ki_template *>(reinterpret_cast<const char *>(t) + t->template_offset
                                                     + uint64_t(i) * t->template_entry_bytes);
}

/**
 * Records the first failure in the table's status fields: a compare-and-swap of status_code from GDS_KI_OK
 * to GDS_KI_STATUS_CLAIMED; the winner stores kind and index, fences, then stores the code. Later failures
 * do nothing. The status fields are the one part of the table its executor writes, hence the const.
 *
 * @return whether this call recorded the failure
 */
__device__ __forceinline__ bool report(const gds_ki_table_header *table, int code, uint32_t kind, uint32_t index) {
    if (table == nullptr || code == GDS_KI_OK || code == GDS_KI_STATUS_CLAIMED) {
        return false;
    }
    gds_ki_table_header *t = const_cast<gds_ki_table_header *>(table);
    unsigned int *status = reinterpret_cast<unsigned int *>(&t->status_code);
    if (atomicCAS_system(status, unsigned(GDS_KI_OK), unsigned(GDS_KI_STATUS_CLAIMED)) != unsigned(GDS_KI_OK)) {
        return false;
    }
    *reinterpret_cast<volatile uint32_t *>(&t->status_kind) = kind;
    *reinterpret_cast<volatile uint32_t *>(&t->status_index) = index;
    __threadfence_system();
    *reinterpret_cast<volatile int32_t *>(&t->status_code) = code;
    return true;
}

/* ---- sends ------------------------------------------------------------------------------------------- */

/** Rings: the doorbell record, a system fence if asked, the doorbell. */
__device__ __forceinline__ void ring(uint64_t dbrec_addr, uint32_t dbrec_value, uint32_t flags, uint64_t db_addr,
                                     uint64_t db_value) {
    store32(dbrec_addr, dbrec_value);
    if (flags & GDS_KI_SEND_FENCE_SYSTEM) {
        __threadfence_system();
    }
    store64(db_addr, db_value);
}

/** Rings a prepared send. */
__device__ __forceinline__ void send(const gds_ki_send *e) {
    ring(e->dbrec_addr, e->dbrec_value, e->flags, e->db_addr, e->db_value);
}

/**
 * Patches a templated send's local address, lkey, length (SGE and total), remote address and rkey in its
 * work request (little-endian with 64-bit keys, or big-endian with 32-bit keys for an mlx5 WQE; byte by byte
 * where an offset is not naturally aligned; absent fields left alone), fences, and rings it.
 */
__device__ __forceinline__ void send_template(const gds_ki_template *t, const gds_ki_template_args *a) {
    uint64_t wqe = t->wqe_addr;
    bool mlx5 = (t->flags & GDS_KI_TEMPLATE_MLX5) != 0;
    unsigned key_bytes = mlx5 ? 4 : 8;
    store_field(wqe, t->off_sge_addr, a->laddr, 8, mlx5);
    store_field(wqe, t->off_sge_lkey, a->lkey, key_bytes, mlx5);
    store_field(wqe, t->off_sge_length, a->length, 4, mlx5);
    store_field(wqe, t->off_total_length, a->length, 4, mlx5);
    store_field(wqe, t->off_remote_addr, a->raddr, 8, mlx5);
    store_field(wqe, t->off_rkey, a->rkey, key_bytes, mlx5);
    __threadfence_system();
    ring(t->dbrec_addr, t->dbrec_value, t->flags, t->db_addr, t->db_value);
}

/* ---- waits ------------------------------------------------------------------------------------------- */

/** Whether x satisfies cond against v; cond must be a known condition. */
__device__ __forceinline__ bool condition_holds(uint32_t x, uint32_t v, uint32_t cond) {
    switch (cond) {
    case GDS_KI_COND_GEQ:
        return static_cast<int32_t>(x - v) >= 0;
    case GDS_KI_COND_EQ:
        return x == v;
    case GDS_KI_COND_AND:
        return (x & v) != 0;
    default: /* GDS_KI_COND_NOR */
        return ~(x | v) != 0;
    }
}

/**
 * Whether the host aborted the launch of a table: its status_code is GDS_KI_ABORTED. A load from the table's
 * memory (host-mapped on a GPU: a trip over the bus), so waits make it once every GDS_KI_ABORT_POLLS polls.
 */
__device__ __forceinline__ bool aborted(const gds_ki_table_header *table) {
    return table != nullptr && *reinterpret_cast<const volatile int32_t *>(&table->status_code) == GDS_KI_ABORTED;
}

/**
 * Spins on the 32-bit word at addr until cond holds against value, for at most timeout_ns nanoseconds of
 * the global timer, or until the host aborts the launch of table (when one is given). Never an endless spin.
 *
 * @return GDS_KI_OK, GDS_KI_TIMEOUT, GDS_KI_ABORTED, or GDS_KI_INVALID for an unknown condition
 */
__device__ __forceinline__ int wait_word(const void *addr, uint32_t value, uint32_t cond, uint64_t timeout_ns,
                                         const gds_ki_table_header *table = nullptr) {
    if (cond > GDS_KI_COND_NOR) {
        return GDS_KI_INVALID;
    }
    if (condition_holds(load_relaxed_sys(addr), value, cond)) {
        return GDS_KI_OK;
    }
    uint64_t start = now_ns();
    for (uint32_t polls = 1;; polls++) {
        if (condition_holds(load_relaxed_sys(addr), value, cond)) {
            return GDS_KI_OK;
        }
        if (polls % GDS_KI_ABORT_POLLS == 0 && aborted(table)) {
            return GDS_KI_ABORTED;
        }
        if (now_ns() - start >= timeout_ns) {
            return GDS_KI_TIMEOUT;
        }
    }
}

/**
 * Waits on a wait entry's word (watching table for the host's abort, when given), then fences so that later loads
 * see what the completion covers.
 */
__device__ __forceinline__ int wait(const gds_ki_wait *e, uint64_t timeout_ns,
                                    const gds_ki_table_header *table = nullptr) {
    int rc = wait_word(reinterpret_cast<const void *>(e->word_addr), e->value, e->cond, timeout_ns, table);
    __threadfence_system();
    return rc;
}

/** Releases a waited CQE to the CPU's poll(), if the entry has a release word. */
__device__ __forceinline__ void signal(const gds_ki_wait *e) {
    if (e->flag_addr != 0) {
        store_release_sys(reinterpret_cast<void *>(e->flag_addr), e->flag_value);
    }
}

/* ---- block-cooperative copy -------------------------------------------------------------------------- */

/** This thread's index in its block. */
__device__ __forceinline__ unsigned thread_rank() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/**
 * Copies bytes from src to dst with every thread of the block (all must call it with the same
 * arguments). The source is read with volatile loads, which are not served from the GPU's caches: the
 * NIC writes received data into memory behind them. 8-byte words where source and destination are equally
 * aligned, bytes elsewhere. No barrier: the caller synchronizes the block afterwards.
 */
__device__ __forceinline__ void copy_block(void *dst, const void *src, uint64_t bytes) {
    const uint64_t tid = thread_rank();
    const uint64_t threads = uint64_t(blockDim.x) * blockDim.y * blockDim.z;
    const volatile uint8_t *s = static_cast<const volatile uint8_t *>(src);
    uint8_t *d = static_cast<uint8_t *>(dst);
    uint64_t head = 0;
    uint64_t words = 0;
    if (((reinterpret_cast<uintptr_t>(src) ^ reinterpret_cast<uintptr_t>(dst)) & 7) == 0) {
        head = (8 - (reinterpret_cast<uintptr_t>(src) & 7)) & 7;
        if (head > bytes) {
            head = bytes;
        }
        words = (bytes - head) / 8;
    }
    const uint64_t body_end = head + words * 8;
    if (words != 0) {
        const volatile uint64_t *sw = reinterpret_cast<const volatile uint64_t *>(s + head);
        uint64_t *dw = reinterpret_cast<uint64_t *>(d + head);
        for (uint64_t i = tid; i < words; i += threads) {
            dw[i] = sw[i];
        }
    }
    /* the bytes outside the 8-byte body: the unaligned head, the tail, or everything */
    const uint64_t rest = head + (bytes - body_end);
    for (uint64_t i = tid; i < rest; i += threads) {
        uint64_t at = i < head ? i : body_end + (i - head);
        d[at] = s[at];
    }
}

/* ---- exchange ---------------------------------------------------------------------------------------- */

/**
 * Copy work for gds_ki::exchange, over a gds_ki_exchange_work: pack step i copies pack[i], interior chunk
 * c copies part c of interior then busy-waits interior_ns, unpack step j copies unpack[j].
 */
struct copy_work {
    const gds_ki_exchange_work *w;

    __device__ void pack(uint32_t i) const {
        if (w->pack != 0) {
            const gds_ki_copy *c = reinterpret_cast<const gds_ki_copy *>(w->pack) + i;
            copy_block(reinterpret_cast<void *>(c->dst), reinterpret_cast<const void *>(c->src), c->bytes);
        }
    }

    __device__ uint32_t interior_chunks() const {
        return w->interior_chunks;
    }

    __device__ void interior(uint32_t chunk) const {
        if (w->interior != 0) {
            const gds_ki_copy *c = reinterpret_cast<const gds_ki_copy *>(w->interior);
            uint64_t n = c->bytes;
            uint64_t k = w->interior_chunks;
            /* [c*n/k, (c+1)*n/k), computed without overflowing c*n */
            uint64_t from = (n / k) * chunk + (n % k) * chunk / k;
            uint64_t to = (n / k) * (chunk + 1) + (n % k) * (chunk + 1) / k;
            copy_block(reinterpret_cast<void *>(c->dst + from), reinterpret_cast<const void *>(c->src + from),
                       to - from);
        }
        spin_ns(w->interior_ns);
    }

    __device__ uint32_t unpack_count() const {
        return w->unpack_count;
    }

    __device__ void unpack(uint32_t j) const {
        if (w->unpack == 0) {
            return;
        }
        const gds_ki_copy *c = reinterpret_cast<const gds_ki_copy *>(w->unpack) + j;
        copy_block(reinterpret_cast<void *>(c->dst), reinterpret_cast<const void *>(c->src), c->bytes);
    }
};

/** Hands a value from thread 0 to every thread of the block (a barrier on each side of the exchange). */
__device__ __forceinline__ uint32_t block_broadcast(uint32_t v, volatile uint32_t *slot) {
    __syncthreads();
    if (thread_rank() == 0) {
        *slot = v;
    }
    __syncthreads();
    return *slot;
}

/** Interior chunks, taken by thread 0 of each block from ctl->chunk until none is left. */
template <class Work>
__device__ void exchange_interior(gds_ki_exchange_ctl *ctl, Work &work, volatile uint32_t *slot) {
    const uint32_t chunks = work.interior_chunks();
    for (;;) {
        uint32_t c = 0;
        if (thread_rank() == 0) {
            c = atomicAdd(&ctl->chunk, 1u);
        }
        c = block_broadcast(c, slot);
        if (c >= chunks) {
            return;
        }
        work.interior(c);
    }
}

/**
 * The fused exchange (docs/ki.md, "Exchange"), for any work. Every thread of every block of the grid calls
 * it with the same arguments; the grid must have 1 + pack_blocks + unpack_blocks blocks, all co-resident
 * (a cooperative launch). Roles go by arrival: the first block is the receiver, then pack_blocks pack blocks,
 * then unpack_blocks unpack blocks.
 *
 * Work needs these block-cooperative device members (called by every thread of one block):
 *   void pack(uint32_t i)            pack what send entry i carries (i < send_count)
 *   uint32_t interior_chunks()       how many interior chunks there are
 *   void interior(uint32_t c)        interior chunk c
 *   uint32_t unpack_count()          how many unpack steps there are
 *   void unpack(uint32_t j)          unpack step j, after every wait of the table passed
 * A member that reads data the NIC wrote must read it with volatile loads (copy_block does).
 */
template <class Work>
__device__ void exchange(const gds_ki_table_header *table, gds_ki_exchange_ctl *ctl, Work &work,
                         uint32_t pack_blocks, uint32_t unpack_blocks, uint64_t timeout_ns) {
    __shared__ uint32_t slot;
    const bool leader = thread_rank() == 0;

    uint32_t role = 0;
    uint32_t bad = 0;
    if (leader) {
        const uint64_t blocks = uint64_t(gridDim.x) * gridDim.y * gridDim.z;
        if (check_table(table) != GDS_KI_OK || pack_blocks == 0
            || blocks != 1 + uint64_t(pack_blocks) + unpack_blocks) {
            report(table, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
            bad = 1;
        } else {
            role = atomicAdd(&ctl->role, 1u);
        }
    }
    if (block_broadcast(bad, &slot)) {
        return;
    }
    role = block_broadcast(role, &slot);

    if (role == 0) {
        /* receiver: every wait in table order, then the barrier, then interior chunks */
        uint32_t failed = 0;
        if (leader) {
            const uint32_t waits = table->wait_count;
            for (uint32_t j = 0; j < waits; j++) {
                const gds_ki_wait *e = wait_entry(table, j);
                int rc = wait(e, timeout_ns, table);
                if (rc != GDS_KI_OK) {
                    report(table, rc, GDS_KI_KIND_WAIT, j);
                    store_release_sys(&ctl->arrived, GDS_KI_ARRIVED_FAILED);
                    failed = 1;
                    break;
                }
                signal(e);
            }
            if (!failed) {
                __threadfence_system();
                store_release_sys(&ctl->arrived, GDS_KI_ARRIVED_OK);
            }
        }
        if (block_broadcast(failed, &slot)) {
            return;
        }
        exchange_interior(ctl, work, &slot);
    } else if (role <= pack_blocks) {
        /* pack block p: pack send entries p, p + N, ... and ring each in table order */
        const uint32_t p = role - 1;
        const uint32_t sends = table->send_count;
        const uint64_t bound = saturating_mul(timeout_ns, uint64_t(sends) + 1);
        for (uint32_t i = p; i < sends; i += pack_blocks) {
            work.pack(i);
            __threadfence_system(); /* this thread's packed bytes before the doorbell, for the NIC */
            __syncthreads();        /* the whole step is packed before thread 0 rings it */
            uint32_t failed = 0;
            if (leader) {
                int rc = wait_word(&ctl->next_send, i, GDS_KI_COND_EQ, bound, table);
                if (rc != GDS_KI_OK) {
                    report(table, rc, GDS_KI_KIND_SEND, i);
                    failed = 1;
                } else {
                    __threadfence_system();
                    send(send_entry(table, i));
                    __threadfence_system();
                    store_release_sys(&ctl->next_send, i + 1);
                }
            }
            if (block_broadcast(failed, &slot)) {
                return;
            }
        }
        exchange_interior(ctl, work, &slot);
    } else {
        /* unpack block u: interior first (overlapping the communication), then the barrier, then unpack */
        const uint32_t u = role - 1 - pack_blocks;
        exchange_interior(ctl, work, &slot);
        uint32_t arrived = 0;
        if (leader) {
            const uint64_t bound = saturating_mul(timeout_ns, uint64_t(table->wait_count) + 1);
            /* arrived != 0: OK (1) or FAILED (2) */
            int rc = wait_word(&ctl->arrived, GDS_KI_ARRIVED_OK | GDS_KI_ARRIVED_FAILED, GDS_KI_COND_AND, bound, table);
            if (rc != GDS_KI_OK) {
                report(table, rc, GDS_KI_KIND_BARRIER, 0);
                arrived = GDS_KI_ARRIVED_FAILED;
            } else {
                arrived = load_acquire_sys(&ctl->arrived);
            }
        }
        if (block_broadcast(arrived, &slot) != GDS_KI_ARRIVED_OK) {
            return;
        }
        const uint32_t steps = work.unpack_count();
        for (uint32_t j = u; j < steps; j += unpack_blocks) {
            work.unpack(j);
        }
    }
}

} // namespace gds_ki

#endif /* __CUDACC__ */
#endif /* GDASYNC_KI_DEVICE_CUH */

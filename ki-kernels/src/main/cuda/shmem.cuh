/*
 * gdasync shmem device API: OpenSHMEM-style one-sided calls made by the threads of a kernel (the KI model of
 * docs/shmem.md), on templated sends over a KI descriptor table (device.cuh).
 *
 * The CPU (libmp's ShmemKi) prepares, ahead of the launch, a number of send-queue slots toward each PE: each is
 * an RDMA write whose static fields (opcode, flags, queue pair, completion) the CPU has written, exported as a
 * template entry of the table, with the wait for its completion as the wait entry of the same index. A kernel
 * call takes the next slot toward the PE, writes only the dynamic fields (local address and key, remote
 * address and key, length) and rings it. The structs below mirror dev.gdasync.gdsync.ki.ShmemKiLayout byte for
 * byte (a test compiles this header with a host compiler and compares).
 *
 * Contexts: one per block (gds_shmem::ctx{state, block}); a context's calls are made by one thread of its
 * block. Blocks share the slots toward a PE (one queue pair per peer): a call takes a ticket, patches its slot,
 * then rings in ticket order (the queue pair's doorbell record is cumulative), so the NIC never reads a slot
 * that is not patched yet.
 *
 * Memory model (why put-with-signal's data is visible before its signal): a SET signal is a second templated
 * write on the same queue pair, rung after the data's; the NIC executes a queue pair's writes in order and a
 * write is complete at the target before the next starts; so the signal word changes only after the data
 * landed. The p value and the signal value are stored into the slot's staging word before the system fence
 * that precedes the ring, so the NIC reads the new value.
 *
 * Direct calls: get, the atomics and ADD signals read or update the PE's heap through its mapping in this
 * process (the software NIC over shared memory maps every peer's heap), after a quiet toward that PE, so they
 * are ordered after every earlier put to it. Where a PE's heap is not mapped (state.pes[pe].mapped == 0) they
 * fail with GDS_KI_INVALID.
 *
 * Every wait is bounded by state.timeout_ns and watches the table's status_code: once the host recorded
 * GDS_KI_ABORTED there (the job failed) the wait returns that code. A failure is recorded in the table's status
 * (first one wins) and the call returns its code. Each block calls gds_shmem::block_exit last; the last block to arrive rings the unused
 * slots as empty writes (the CPU's later posts on those queue pairs come after them) and releases every
 * completion to the CPU.
 */
#ifndef GDASYNC_SHMEM_CUH
#define GDASYNC_SHMEM_CUH

#include "device.cuh"

/** "GSHM" as little-endian bytes. */
#define GDS_SHMEM_MAGIC 0x4D485347u
#define GDS_SHMEM_VERSION 1

/** Comparisons of wait_until / signal_wait_until (OpenSHMEM's SHMEM_CMP_*), on 64-bit signed words. */
#define GDS_SHMEM_CMP_EQ 0u
#define GDS_SHMEM_CMP_NE 1u
#define GDS_SHMEM_CMP_GT 2u
#define GDS_SHMEM_CMP_GE 3u
#define GDS_SHMEM_CMP_LT 4u
#define GDS_SHMEM_CMP_LE 5u

/** Signal operations. */
#define GDS_SHMEM_SIGNAL_SET 0u
#define GDS_SHMEM_SIGNAL_ADD 1u

/** One PE as the kernel sees it (48 bytes). */
typedef struct gds_shmem_pe {
    uint64_t heap_nic; /* the PE's heap as the NIC addresses it (a window's remote address) */
    uint64_t rkey;     /* its heap's rkey */
    uint64_t mapped;   /* its heap mapped in this process (executor address), or 0 */
    uint32_t first;    /* its slots: template and wait entries [first, first + count) */
    uint32_t count;
    uint32_t ticket;   /* the next slot to take (device-written) */
    uint32_t turn;     /* the next slot to ring (device-written) */
    uint64_t reserved;
} gds_shmem_pe;

/** A launch's shared state (112 bytes), written by the CPU; exited, tickets and turns by the blocks. */
typedef struct gds_shmem_state {
    uint64_t table;        /* the KI table (const gds_ki_table_header *) */
    uint64_t heap;         /* this PE's heap (executor address) */
    uint64_t heap_nic;     /* the same as the NIC addresses it */
    uint64_t heap_bytes;
    uint64_t heap_lkey;
    uint64_t staging;      /* one 8-byte word per slot, for p and SET values (executor address) */
    uint64_t staging_nic;
    uint64_t staging_lkey;
    uint64_t timeout_ns;   /* the bound of every wait */
    uint32_t my_pe;
    uint32_t n_pes;
    uint32_t blocks;
    uint32_t exited;       /* blocks that called exit */
    uint64_t pes;          /* gds_shmem_pe[n_pes] */
    uint64_t last;         /* uint32_t[blocks][n_pes]: 1 + the block's last slot toward each PE, 0 for none */
    uint32_t magic;
    uint32_t version;
} gds_shmem_state;

#define GDS_SHMEM_CHECK_FIELD(T, f, off) static_assert(offsetof(T, f) == (off), #T "." #f " moved")
static_assert(sizeof(gds_shmem_pe) == 48, "gds_shmem_pe is 48 bytes");
GDS_SHMEM_CHECK_FIELD(gds_shmem_pe, heap_nic, 0);
GDS_SHMEM_CHECK_FIELD(gds_shmem_pe, rkey, 8);
GDS_SHMEM_CHECK_FIELD(gds_shmem_pe, mapped, 16);
GDS_SHMEM_CHECK_FIELD(gds_shmem_pe, first, 24);
GDS_SHMEM_CHECK_FIELD(gds_shmem_pe, count, 28);
GDS_SHMEM_CHECK_FIELD(gds_shmem_pe, ticket, 32);
GDS_SHMEM_CHECK_FIELD(gds_shmem_pe, turn, 36);
static_assert(sizeof(gds_shmem_state) == 112, "gds_shmem_state is 112 bytes");
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, table, 0);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, heap, 8);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, heap_nic, 16);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, heap_bytes, 24);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, heap_lkey, 32);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, staging, 40);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, staging_nic, 48);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, staging_lkey, 56);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, timeout_ns, 64);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, my_pe, 72);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, n_pes, 76);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, blocks, 80);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, exited, 84);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, pes, 88);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, last, 96);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, magic, 104);
GDS_SHMEM_CHECK_FIELD(gds_shmem_state, version, 108);
#undef GDS_SHMEM_CHECK_FIELD

#ifdef __CUDACC__

namespace gds_shmem {

/** A block's context: the launch's state and the block's index. */
struct ctx {
    gds_shmem_state *s;
    uint32_t block;
};

__device__ __forceinline__ const gds_ki_table_header *table(const ctx &c) {
    return reinterpret_cast<const gds_ki_table_header *>(c.s->table);
}

__device__ __forceinline__ gds_shmem_pe *pe_of(const ctx &c, uint32_t pe) {
    return reinterpret_cast<gds_shmem_pe *>(c.s->pes) + pe;
}

__device__ __forceinline__ uint32_t *last_of(const ctx &c, uint32_t pe) {
    return reinterpret_cast<uint32_t *>(c.s->last) + uint64_t(c.block) * c.s->n_pes + pe;
}

/** Records a failure in the table's status (the first one wins) and returns its code. */
__device__ __forceinline__ int fail(const ctx &c, int code, uint32_t kind, uint32_t index) {
    gds_ki::report(table(c), code, kind, index);
    return code;
}

/** The context of this block, after checking the state; GDS_KI_INVALID (recorded) if it is not one. */
__device__ __forceinline__ int init(gds_shmem_state *s, uint32_t block, ctx *out) {
    out->s = s;
    out->block = block;
    if (s == nullptr || s->magic != GDS_SHMEM_MAGIC || s->version != GDS_SHMEM_VERSION || block >= s->blocks
        || gds_ki::check_table(reinterpret_cast<const gds_ki_table_header *>(s->table)) != GDS_KI_OK) {
        if (s != nullptr) {
            gds_ki::report(reinterpret_cast<const gds_ki_table_header *>(s->table), GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
        }
        return GDS_KI_INVALID;
    }
    return GDS_KI_OK;
}

/** Whether [addr, addr + bytes) lies in this PE's heap; its heap offset in *off. */
__device__ __forceinline__ bool in_heap(const ctx &c, const void *addr, uint64_t bytes, uint64_t *off) {
    uint64_t a = reinterpret_cast<uint64_t>(addr);
    if (a < c.s->heap || bytes > c.s->heap_bytes || a - c.s->heap > c.s->heap_bytes - bytes) {
        return false;
    }
    *off = a - c.s->heap;
    return true;
}

/** Waits for slot j's completion (bounded); no release (exit releases). */
__device__ __forceinline__ int wait_slot(const ctx &c, uint32_t j) {
    int rc = gds_ki::wait(gds_ki::wait_entry(table(c), j), c.s->timeout_ns, table(c));
    return rc == GDS_KI_OK ? rc : fail(c, rc, GDS_KI_KIND_WAIT, j);
}

/**
 * Takes the next slot toward pe, patches it with the dynamic fields and rings it in ticket order.
 * @return GDS_KI_OK, GDS_KI_INVALID (no slot left) or GDS_KI_TIMEOUT (an earlier ticket was never rung)
 */
__device__ __forceinline__ int send(const ctx &c, uint32_t pe, uint64_t laddr, uint64_t lkey, uint64_t roff,
                                    uint32_t length, bool staged, uint64_t value) {
    gds_shmem_pe *p = pe_of(c, pe);
    uint32_t t = atomicAdd(&p->ticket, 1u);
    if (t >= p->count) {
        return fail(c, GDS_KI_INVALID, GDS_KI_KIND_TEMPLATE, p->first + p->count);
    }
    uint32_t j = p->first + t;
    if (staged) {
        /* the staging word of this slot: the p or SET value the NIC will read */
        uint64_t *word = reinterpret_cast<uint64_t *>(c.s->staging) + j;
        *reinterpret_cast<volatile uint64_t *>(word) = value;
        laddr = c.s->staging_nic + 8ull * j;
        lkey = c.s->staging_lkey;
    }
    int rc = gds_ki::wait_word(&p->turn, t, GDS_KI_COND_EQ, c.s->timeout_ns, table(c));
    if (rc != GDS_KI_OK) {
        return fail(c, rc, GDS_KI_KIND_SEND, j);
    }
    gds_ki_template_args a{laddr, lkey, p->heap_nic + roff, p->rkey, length, 0};
    gds_ki::send_template(gds_ki::template_entry(table(c), j), &a); /* fences before ringing */
    gds_ki::store_release_sys(&p->turn, t + 1);
    *last_of(c, pe) = j + 1;
    return GDS_KI_OK;
}

/** Checks a PE number. */
__device__ __forceinline__ bool pe_ok(const ctx &c, int pe) {
    return pe >= 0 && uint32_t(pe) < c.s->n_pes;
}

/* ---- RMA --------------------------------------------------------------------------------------------- */

/** shmem_putmem_nbi: dest and src in this PE's heap (symmetric addresses). */
__device__ __forceinline__ int put_nbi(const ctx &c, void *dest, const void *src, uint64_t bytes, int pe) {
    uint64_t doff, soff;
    if (!pe_ok(c, pe) || !in_heap(c, dest, bytes, &doff) || !in_heap(c, src, bytes, &soff) || bytes > 0xffffffffull) {
        return fail(c, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
    }
    if (uint32_t(pe) == c.s->my_pe) {
        gds_ki::copy_block(dest, src, bytes); /* one thread: the block's other threads are not in this call */
        __threadfence_system();
        return GDS_KI_OK;
    }
    return send(c, pe, c.s->heap_nic + soff, c.s->heap_lkey, doff, uint32_t(bytes), false, 0);
}

/** Waits for every call of this context toward pe (shmem_quiet for one PE). */
__device__ __forceinline__ int quiet_pe(const ctx &c, uint32_t pe) {
    uint32_t last = *last_of(c, pe);
    return last == 0 ? GDS_KI_OK : wait_slot(c, last - 1);
}

/** shmem_quiet: everything this context put is complete and visible at its target. */
__device__ __forceinline__ int quiet(const ctx &c) {
    for (uint32_t pe = 0; pe < c.s->n_pes; pe++) {
        int rc = quiet_pe(c, pe);
        if (rc != GDS_KI_OK) {
            return rc;
        }
    }
    return GDS_KI_OK;
}

/**
 * shmem_fence: puts, p and SET signals to one PE are already delivered in order (one queue pair, executed in
 * order); get, atomics and ADD signals quiet that PE first. So a fence only orders this thread's own stores.
 */
__device__ __forceinline__ int fence(const ctx &) {
    __threadfence_system();
    return GDS_KI_OK;
}

/** shmem_putmem: returns once the data is delivered (its slot completed). */
__device__ __forceinline__ int put(const ctx &c, void *dest, const void *src, uint64_t bytes, int pe) {
    int rc = put_nbi(c, dest, src, bytes, pe);
    return rc != GDS_KI_OK || uint32_t(pe) == c.s->my_pe ? rc : quiet_pe(c, pe);
}

/** shmem_uint64_p: the value goes from the slot's staging word; returns at once. */
__device__ __forceinline__ int p(const ctx &c, uint64_t *dest, uint64_t value, int pe) {
    uint64_t doff;
    if (!pe_ok(c, pe) || !in_heap(c, dest, 8, &doff) || (doff & 7) != 0) {
        return fail(c, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
    }
    if (uint32_t(pe) == c.s->my_pe) {
        gds_ki::store64(reinterpret_cast<uint64_t>(dest), value);
        __threadfence_system();
        return GDS_KI_OK;
    }
    return send(c, pe, 0, 0, doff, 8, true, value);
}

/** The PE's heap word at a symmetric address, for a direct access; nullptr (recorded) if it is not mapped. */
__device__ __forceinline__ uint64_t direct(const ctx &c, const void *sym, uint64_t bytes, int pe, uint64_t align) {
    uint64_t off;
    if (!pe_ok(c, pe) || !in_heap(c, sym, bytes, &off) || (off & (align - 1)) != 0) {
        fail(c, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
        return 0;
    }
    uint64_t base = uint32_t(pe) == c.s->my_pe ? c.s->heap : pe_of(c, pe)->mapped;
    if (base == 0) {
        fail(c, GDS_KI_INVALID, GDS_KI_KIND_NONE, uint32_t(pe));
        return 0;
    }
    if (quiet_pe(c, uint32_t(pe)) != GDS_KI_OK) {
        return 0;
    }
    return base + off;
}

/** shmem_getmem: src in the heap (symmetric), dest anywhere this thread may write. */
__device__ __forceinline__ int get(const ctx &c, void *dest, const void *src, uint64_t bytes, int pe) {
    uint64_t from = direct(c, src, bytes, pe, 1);
    if (from == 0) {
        return GDS_KI_INVALID;
    }
    gds_ki::copy_block(dest, reinterpret_cast<const void *>(from), bytes);
    __threadfence_system();
    return GDS_KI_OK;
}

/* ---- atomics (64-bit, direct: see the header comment) -------------------------------------------------- */

/** Applies a system-scope atomic to the PE's word at a symmetric address (direct; quiets pe first). */
template <class Op>
__device__ __forceinline__ int atomic_apply(const ctx &c, const uint64_t *dest, int pe, uint64_t *old, Op op) {
    uint64_t w = direct(c, dest, 8, pe, 8);
    if (w == 0) {
        return GDS_KI_INVALID;
    }
    *old = op(reinterpret_cast<unsigned long long *>(w));
    return GDS_KI_OK;
}

/** shmem_atomic_fetch_add; the old value in *old. */
__device__ __forceinline__ int atomic_fetch_add(const ctx &c, uint64_t *dest, uint64_t value, int pe, uint64_t *old) {
    return atomic_apply(c, dest, pe, old, [value](unsigned long long *w) { return atomicAdd_system(w, value); });
}

__device__ __forceinline__ int atomic_add(const ctx &c, uint64_t *dest, uint64_t value, int pe) {
    uint64_t old;
    return atomic_fetch_add(c, dest, value, pe, &old);
}

__device__ __forceinline__ int atomic_inc(const ctx &c, uint64_t *dest, int pe) {
    return atomic_add(c, dest, 1, pe);
}

__device__ __forceinline__ int atomic_fetch_inc(const ctx &c, uint64_t *dest, int pe, uint64_t *old) {
    return atomic_fetch_add(c, dest, 1, pe, old);
}

/** shmem_atomic_compare_swap: the swap happened exactly when *old == cond. */
__device__ __forceinline__ int atomic_compare_swap(const ctx &c, uint64_t *dest, uint64_t cond, uint64_t value, int pe,
                                                   uint64_t *old) {
    return atomic_apply(c, dest, pe, old,
                        [cond, value](unsigned long long *w) { return atomicCAS_system(w, cond, value); });
}

__device__ __forceinline__ int atomic_swap(const ctx &c, uint64_t *dest, uint64_t value, int pe, uint64_t *old) {
    return atomic_apply(c, dest, pe, old, [value](unsigned long long *w) { return atomicExch_system(w, value); });
}

__device__ __forceinline__ int atomic_set(const ctx &c, uint64_t *dest, uint64_t value, int pe) {
    uint64_t old;
    return atomic_swap(c, dest, value, pe, &old);
}

__device__ __forceinline__ int atomic_fetch(const ctx &c, const uint64_t *src, int pe, uint64_t *value) {
    return atomic_apply(c, src, pe, value, [](unsigned long long *w) { return atomicAdd_system(w, 0ull); });
}

/* ---- put with signal, waits ---------------------------------------------------------------------------- */

/** shmem_putmem_signal_nbi: SET is a second templated write after the data's; ADD quiets pe, then adds. */
__device__ __forceinline__ int put_signal_nbi(const ctx &c, void *dest, const void *src, uint64_t bytes, uint64_t *sig,
                                              uint64_t signal, uint32_t op, int pe) {
    if (op > GDS_SHMEM_SIGNAL_ADD) {
        return fail(c, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
    }
    int rc = put_nbi(c, dest, src, bytes, pe);
    if (rc != GDS_KI_OK) {
        return rc;
    }
    return op == GDS_SHMEM_SIGNAL_SET ? p(c, sig, signal, pe) : atomic_add(c, sig, signal, pe);
}

/** shmem_putmem_signal: as put_signal_nbi, then waits for the delivery. */
__device__ __forceinline__ int put_signal(const ctx &c, void *dest, const void *src, uint64_t bytes, uint64_t *sig,
                                          uint64_t signal, uint32_t op, int pe) {
    int rc = put_signal_nbi(c, dest, src, bytes, sig, signal, op, pe);
    return rc != GDS_KI_OK || uint32_t(pe) == c.s->my_pe ? rc : quiet_pe(c, uint32_t(pe));
}

__device__ __forceinline__ bool compare(int64_t x, uint32_t cmp, int64_t v) {
    switch (cmp) {
    case GDS_SHMEM_CMP_EQ: return x == v;
    case GDS_SHMEM_CMP_NE: return x != v;
    case GDS_SHMEM_CMP_GT: return x > v;
    case GDS_SHMEM_CMP_GE: return x >= v;
    case GDS_SHMEM_CMP_LT: return x < v;
    default: return x <= v;
    }
}

/** shmem_uint64_wait_until on a word of this PE's heap, bounded (and ended by the host's abort); the value seen in *seen. */
__device__ __forceinline__ int wait_until(const ctx &c, const uint64_t *ivar, uint32_t cmp, uint64_t value,
                                          uint64_t *seen) {
    uint64_t off;
    if (cmp > GDS_SHMEM_CMP_LE || !in_heap(c, ivar, 8, &off) || (off & 7) != 0) {
        return fail(c, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
    }
    const volatile uint64_t *w = ivar;
    uint64_t x = *w;
    uint64_t start = gds_ki::now_ns();
    for (uint32_t polls = 1; !compare(int64_t(x), cmp, int64_t(value)); polls++) {
        if (polls % GDS_KI_ABORT_POLLS == 0 && gds_ki::aborted(table(c))) {
            return GDS_KI_ABORTED; /* recorded by the host */
        }
        if (gds_ki::now_ns() - start >= c.s->timeout_ns) {
            /* index: the heap word's offset in 8-byte words, past every entry of the table */
            return fail(c, GDS_KI_TIMEOUT, GDS_KI_KIND_WAIT, table(c)->wait_count + uint32_t(off / 8));
        }
        x = *w;
    }
    __threadfence_system(); /* later loads see what the writer put before the word */
    *seen = x;
    return GDS_KI_OK;
}

/** shmem_signal_wait_until. */
__device__ __forceinline__ int signal_wait_until(const ctx &c, const uint64_t *sig, uint32_t cmp, uint64_t value,
                                                 uint64_t *seen) {
    return wait_until(c, sig, cmp, value, seen);
}

/* ---- end of a block -------------------------------------------------------------------------------------- */

/**
 * Called once by each block when it is done. The last block rings every slot not rung yet as an empty write (in
 * slot order) and then waits for every slot's completion and releases it to the CPU.
 */
__device__ __forceinline__ int block_exit(const ctx &c) {
    __threadfence_system();
    if (atomicAdd(&c.s->exited, 1u) + 1 != c.s->blocks) {
        return GDS_KI_OK;
    }
    __threadfence_system();
    int result = GDS_KI_OK;
    for (uint32_t pe = 0; pe < c.s->n_pes; pe++) {
        gds_shmem_pe *p = pe_of(c, pe);
        /* from the turn, not the ticket: a slot taken by a block that then failed was never rung */
        for (uint32_t t = p->turn < p->count ? p->turn : p->count; t < p->count; t++) {
            uint32_t j = p->first + t;
            gds_ki_template_args a{c.s->staging_nic + 8ull * j, c.s->staging_lkey, p->heap_nic, p->rkey, 0, 0};
            gds_ki::send_template(gds_ki::template_entry(table(c), j), &a);
        }
        p->ticket = p->count;
        p->turn = p->count;
        for (uint32_t t = 0; t < p->count; t++) {
            const gds_ki_wait *e = gds_ki::wait_entry(table(c), p->first + t);
            int rc = gds_ki::wait(e, c.s->timeout_ns, table(c));
            if (rc != GDS_KI_OK) {
                result = fail(c, rc, GDS_KI_KIND_WAIT, p->first + t);
                break;
            }
            gds_ki::signal(e);
        }
    }
    return result;
}

} // namespace gds_shmem

#endif /* __CUDACC__ */
#endif /* GDASYNC_SHMEM_CUH */

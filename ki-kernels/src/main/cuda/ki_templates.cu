/*
 * gdasync KI kernels: the templates of docs/ki.md ("Kernels") over a KI descriptor table, on the device API
 * of device.cuh. Built to PTX and cubins by build-kernels.sh and launched from Java by name, with the
 * parameters in the order given here. Every spin is bounded; failures go to the table's status fields.
 */
#include "device.cuh"

/*
 * Ping-pong, one thread (grid 1, block 1; any other thread returns at once). Iteration i uses send entry i
 * (message i) and wait entry i (the receive completion of the peer's message i):
 *   initiator: send i, wait i, signal i, compute
 *   responder: wait i, signal i, compute, send i
 * compute is compute_ns of busy waiting on the global timer.
 */
extern "C" __global__ void gds_ki_pingpong(const gds_ki_table_header *table, uint32_t count, uint32_t initiator,
                                           uint64_t compute_ns, uint64_t timeout_ns) {
    if (threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockIdx.y + blockIdx.z != 0) {
        return;
    }
    if (gds_ki::check_table(table) != GDS_KI_OK || count > table->send_count || count > table->wait_count) {
        gds_ki::report(table, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        const gds_ki_wait *w = gds_ki::wait_entry(table, i);
        if (initiator) {
            gds_ki::send(gds_ki::send_entry(table, i));
        }
        int rc = gds_ki::wait(w, timeout_ns, table);
        if (rc != GDS_KI_OK) {
            gds_ki::report(table, rc, GDS_KI_KIND_WAIT, i);
            return;
        }
        gds_ki::signal(w);
        gds_ki::spin_ns(compute_ns);
        if (!initiator) {
            gds_ki::send(gds_ki::send_entry(table, i));
        }
    }
}

/*
 * Template sends, one thread (grid 1, block 1; any other thread returns at once): for i in 0..count-1,
 * patch template entry i with args[i] and ring it, in table order.
 */
extern "C" __global__ void gds_ki_send_templates(const gds_ki_table_header *table, const gds_ki_template_args *args,
                                                 uint32_t count) {
    if (threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockIdx.y + blockIdx.z != 0) {
        return;
    }
    if (gds_ki::check_table(table) != GDS_KI_OK || count > table->template_count || (count != 0 && args == nullptr)) {
        gds_ki::report(table, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        gds_ki::send_template(gds_ki::template_entry(table, i), args + i);
    }
}

/*
 * The fused exchange with copy work: grid 1 + pack_blocks + unpack_blocks, launched cooperatively so that
 * every block is resident; any block size. ctl is zero at launch.
 */
extern "C" __global__ void gds_ki_exchange(const gds_ki_table_header *table, gds_ki_exchange_ctl *ctl,
                                           const gds_ki_exchange_work *work, uint32_t pack_blocks,
                                           uint32_t unpack_blocks, uint64_t timeout_ns) {
    if (ctl == nullptr || work == nullptr) {
        if (threadIdx.x + threadIdx.y + threadIdx.z == 0) {
            gds_ki::report(table, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
        }
        return;
    }
    gds_ki::copy_work copies{work};
    gds_ki::exchange(table, ctl, copies, pack_blocks, unpack_blocks, timeout_ns);
}

/*
 * Emulated compute on a stream, one thread (grid 1, block 1): busy waiting of ns nanoseconds on the global
 * timer, then return. The GPU ping-pong runs it as the kernel that produces or consumes each message (LibMP's
 * benchmarks' compute kernel); with ns = 0 it is an empty kernel, the cost of a launch.
 */
extern "C" __global__ void gds_compute_spin(uint64_t ns) {
    if (threadIdx.x + blockIdx.x != 0) {
        return;
    }
    gds_ki::spin_ns(ns);
}

#include "msccl_interpreter.cuh"

/*
 * The MSCCL-IR interpreter (msccl_interpreter.cuh): launch with grid = header.ntb (cooperatively) and any block
 * size; block b runs tb record b. Steps of one block are executed by all its threads; thread 0 does the waits and
 * the signals. spin_limit bounds every wait (a dependency cycle or a lost peer ends with the block's status set).
 */
extern "C" __global__ void gds_msccl_interpreter(const gds_msccl_header *h, gds_msccl_tb *tbs,
                                                 const gds_msccl_step *steps, uint8_t *arena, uint64_t spin_limit) {
    if (h->magic != GDS_MSCCL_MAGIC || blockIdx.x >= h->ntb) {
        return;
    }
    gds_msccl_tb *tb = &tbs[blockIdx.x];
    volatile uint64_t *sems = (volatile uint64_t *)(arena + h->sem_offset);
    __shared__ int give_up;
    uint64_t recv_seq = 0;
    uint64_t send_seq = 0;
    for (uint32_t t = 0; t < h->tiles; t++) {
        uint64_t elems = h->chunk_elems - (uint64_t)t * h->tile_elems;
        if (elems > h->tile_elems) {
            elems = h->tile_elems;
        }
        for (uint32_t s = 0; s < tb->nsteps; s++) {
            const gds_msccl_step *st = &steps[tb->first_step + s];
            bool receives = st->type >= GDS_MSCCL_RECV && st->type <= GDS_MSCCL_RECV_REDUCE_COPY_SEND;
            bool sends = st->type == GDS_MSCCL_SEND || st->type == GDS_MSCCL_RECV_COPY_SEND
                    || st->type == GDS_MSCCL_RECV_REDUCE_SEND || st->type == GDS_MSCCL_RECV_REDUCE_COPY_SEND;
            uint64_t rq = recv_seq + 1;
            uint64_t sq = send_seq + 1;
            uint32_t rslot = (uint32_t)((rq - 1) % h->slots);
            uint32_t sslot = (uint32_t)((sq - 1) % h->slots);
            if (threadIdx.x == 0) {
                bool ok = true;
                if (st->depid >= 0) {
                    uint32_t dep = tb->gpu_first + (uint32_t)st->depid;
                    ok = gds_msccl_wait_geq(&sems[dep], (uint64_t)t * tbs[dep].nsteps + (uint64_t)st->deps + 1,
                                            spin_limit);
                }
                if (ok && receives) {
                    volatile uint64_t *flag = (volatile uint64_t *)(arena + tb->recv_region
                            + (uint64_t)h->slots * h->slot_bytes + 8ull * rslot);
                    ok = gds_msccl_wait_geq(flag, h->epoch_base + rq, spin_limit);
                }
                if (ok && sends && sq > h->slots) {
                    ok = gds_msccl_wait_geq((volatile uint64_t *)(arena + tb->ack_word), h->epoch_base + sq - h->slots,
                                            spin_limit);
                }
                give_up = ok ? 0 : 1;
                if (!ok) {
                    tb->status = 1 + s;
                }
            }
            __syncthreads();
            if (give_up) {
                return;
            }
            uint8_t *in = receives ? arena + tb->recv_region + (uint64_t)rslot * h->slot_bytes : nullptr;
            uint8_t *out = sends ? arena + tb->send_region + (uint64_t)sslot * h->slot_bytes : nullptr;
            switch (h->dtype) {
                case GDS_MSCCL_INT32: gds_msccl_execute<int32_t>(h, st, arena, tb, in, out, t, elems); break;
                case GDS_MSCCL_INT64: gds_msccl_execute<int64_t>(h, st, arena, tb, in, out, t, elems); break;
                case GDS_MSCCL_FLOAT32: gds_msccl_execute<float>(h, st, arena, tb, in, out, t, elems); break;
                default: gds_msccl_execute<double>(h, st, arena, tb, in, out, t, elems); break;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                if (sends) {
                    gds_msccl_store((volatile uint64_t *)(arena + tb->send_region + (uint64_t)h->slots * h->slot_bytes
                                                          + 8ull * sslot), h->epoch_base + sq);
                }
                if (receives) {
                    gds_msccl_store((volatile uint64_t *)(arena + tb->peer_ack_word), h->epoch_base + rq);
                }
                if (st->hasdep) {
                    gds_msccl_store(&sems[blockIdx.x], (uint64_t)t * tb->nsteps + s + 1);
                }
            }
            if (receives) {
                recv_seq = rq;
            }
            if (sends) {
                send_seq = sq;
            }
        }
    }
}

#include "shmem.cuh"

/*
 * shmem ordering (docs/shmem.md, "Inside kernels"): thread 0 of each block runs its context. The sender block b
 * (role 1) puts `bytes` of src, then SET-signals flag b with round i + 1 (use_signal: one put-with-signal; else
 * put, fence, p), for i in 0..rounds-1, and waits for the receiver's ack (ack word b reaching i + 1) before the
 * next round; the receiver block (role 0) waits for flag b == i + 1, compares the data with round i's pattern
 * (every byte (i + b) & 0xff, written by the sender's host before each round: here the kernel writes it),
 * counts mismatches into mismatches[b] and acks with p. Every block ends with block_exit.
 */
extern "C" __global__ void gds_shmem_ordering(gds_shmem_state *state, uint8_t *data, uint64_t *flags, uint64_t *acks,
                                              uint64_t bytes, uint32_t rounds, uint32_t role, uint32_t use_signal,
                                              int peer, uint64_t *mismatches) {
    if (threadIdx.x + threadIdx.y + threadIdx.z != 0) {
        return;
    }
    gds_shmem::ctx c;
    if (gds_shmem::init(state, blockIdx.x, &c) != GDS_KI_OK) {
        return;
    }
    uint8_t *mine = data + uint64_t(blockIdx.x) * bytes;
    uint64_t *flag = flags + blockIdx.x;
    uint64_t *ack = acks + blockIdx.x;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < rounds; i++) {
        uint8_t pattern = uint8_t(i + blockIdx.x);
        if (role == 1) {
            for (uint64_t k = 0; k < bytes; k++) {
                mine[k] = pattern;
            }
            int rc = use_signal ? gds_shmem::put_signal_nbi(c, mine, mine, bytes, flag, i + 1, GDS_SHMEM_SIGNAL_SET, peer)
                                : gds_shmem::put_nbi(c, mine, mine, bytes, peer);
            if (rc == GDS_KI_OK && !use_signal) {
                gds_shmem::fence(c);
                rc = gds_shmem::p(c, flag, i + 1, peer);
            }
            if (rc != GDS_KI_OK || gds_shmem::wait_until(c, ack, GDS_SHMEM_CMP_GE, i + 1, &seen) != GDS_KI_OK) {
                break;
            }
        } else {
            if (gds_shmem::signal_wait_until(c, flag, GDS_SHMEM_CMP_EQ, i + 1, &seen) != GDS_KI_OK) {
                break;
            }
            const volatile uint8_t *d = mine;
            for (uint64_t k = 0; k < bytes; k++) {
                if (d[k] != pattern) {
                    mismatches[blockIdx.x]++;
                }
            }
            if (gds_shmem::p(c, ack, i + 1, peer) != GDS_KI_OK) {
                break;
            }
        }
    }
    gds_shmem::quiet(c);
    gds_shmem::block_exit(c);
}

/*
 * shmem atomics: thread 0 of each block adds one to the word at counter on PE pe, count times, storing each old
 * value into olds[block * count + i]; then every block ends with block_exit.
 */
extern "C" __global__ void gds_shmem_fetch_add(gds_shmem_state *state, uint64_t *counter, uint32_t count, int pe,
                                               uint64_t *olds) {
    if (threadIdx.x + threadIdx.y + threadIdx.z != 0) {
        return;
    }
    gds_shmem::ctx c;
    if (gds_shmem::init(state, blockIdx.x, &c) != GDS_KI_OK) {
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (gds_shmem::atomic_fetch_add(c, counter, 1, pe, &olds[uint64_t(blockIdx.x) * count + i]) != GDS_KI_OK) {
            break;
        }
    }
    gds_shmem::block_exit(c);
}

/*
 * shmem operation loop (shmembench's KI rows on a GPU): thread 0 of block 0 runs op `count` times toward pe, then
 * quiets: 0 put_nbi of bytes from src to dest, 1 p, 2 SET put_signal_nbi, 3 fetch-add, 4 get, 5 blocking put,
 * 6 compare-swap, 7 swap, 8 fetch, 9 set, 10 inc, 11 fetch-inc, 12 ADD put_signal, 13 wait_until(word >= i).
 * Every device call of shmem.cuh is reached from here, so the build compiles and ptxas-checks all of them.
 */
extern "C" __global__ void gds_shmem_ops(gds_shmem_state *state, uint32_t op, void *dest, void *src, uint64_t bytes,
                                         uint64_t *word, uint32_t count, int pe) {
    if (threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockIdx.y + blockIdx.z != 0) {
        return;
    }
    gds_shmem::ctx c;
    if (gds_shmem::init(state, 0, &c) != GDS_KI_OK) {
        return;
    }
    uint64_t old = 0;
    for (uint32_t i = 0; i < count; i++) {
        int rc;
        switch (op) {
        case 0: rc = gds_shmem::put_nbi(c, dest, src, bytes, pe); break;
        case 1: rc = gds_shmem::p(c, word, i, pe); break;
        case 2: rc = gds_shmem::put_signal_nbi(c, dest, src, bytes, word, i, GDS_SHMEM_SIGNAL_SET, pe); break;
        case 3: rc = gds_shmem::atomic_fetch_add(c, word, 1, pe, &old); break;
        case 4: rc = gds_shmem::get(c, dest, src, bytes, pe); break;
        case 5: rc = gds_shmem::put(c, dest, src, bytes, pe); break;
        case 6: rc = gds_shmem::atomic_compare_swap(c, word, i, i + 1, pe, &old); break;
        case 7: rc = gds_shmem::atomic_swap(c, word, i, pe, &old); break;
        case 8: rc = gds_shmem::atomic_fetch(c, word, pe, &old); break;
        case 9: rc = gds_shmem::atomic_set(c, word, i, pe); break;
        case 10: rc = gds_shmem::atomic_inc(c, word, pe); break;
        case 11: rc = gds_shmem::atomic_fetch_inc(c, word, pe, &old); break;
        case 12: rc = gds_shmem::put_signal(c, dest, src, bytes, word, 1, GDS_SHMEM_SIGNAL_ADD, pe); break;
        default: rc = gds_shmem::wait_until(c, word, GDS_SHMEM_CMP_GE, i, &old); break;
        }
        if (rc != GDS_KI_OK) {
            break;
        }
    }
    gds_shmem::quiet(c);
    gds_shmem::block_exit(c);
}

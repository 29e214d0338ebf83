package dev.gdasync.ki.shmem;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.gdsync.ki.ShmemKiLayout;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.kernels.KiDevice;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The shmem device API of {@code shmem.cuh} on the host KI executor: one block's context, run by that block's
 * thread, doing what a kernel thread does with the same state and the same table: a put takes the next slot
 * toward the PE (a ticket), patches the slot's templated send with the local and remote address, keys and length,
 * and rings it in ticket order; get, the atomics and ADD signals go directly to the PE's heap mapped in this process
 * after a quiet toward that PE; every wait is bounded by the state's timeout and ends early, with
 * {@link KiTableLayout#STATUS_ABORTED}, once the host aborted the launch in the table's status ({@link KiTable#abort()}).
 *
 * <p>Where the CUDA functions return a code, these throw a {@link KiException} after recording the failure in the
 * table's status, as the device does (the first failure wins): a launch's {@code join} then reports it. Symmetric
 * addresses are this PE's heap segments (from {@code Shmem.malloc}); one thread uses a context.
 */
public final class ShmemDevice {
    /** Wait comparison: equal ({@code GDS_SHMEM_CMP_EQ}). */
    public static final int CMP_EQ = ShmemKiLayout.CMP_EQ;
    /** Wait comparison: not equal. */
    public static final int CMP_NE = ShmemKiLayout.CMP_NE;
    /** Wait comparison: greater than (signed 64-bit). */
    public static final int CMP_GT = ShmemKiLayout.CMP_GT;
    /** Wait comparison: greater or equal. */
    public static final int CMP_GE = ShmemKiLayout.CMP_GE;
    /** Wait comparison: less than. */
    public static final int CMP_LT = ShmemKiLayout.CMP_LT;
    /** Wait comparison: less or equal. */
    public static final int CMP_LE = ShmemKiLayout.CMP_LE;
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final long state;
    private final int block;
    private final KiTable table;
    private final IdleStrategy idler;
    private final Runnable afterRing;
    private final long heap;
    private final long heapNic;
    private final long heapBytes;
    private final long heapLkey;
    private final long staging;
    private final long stagingNic;
    private final long stagingLkey;
    private final long timeoutNs;
    private final int myPe;
    private final int nPes;
    private final long pes;
    private final long last;

    private ShmemDevice(KiTable table, long state, int block, IdleStrategy idler, Runnable afterRing) {
        this.state = state;
        this.block = block;
        this.table = table;
        this.idler = idler;
        this.afterRing = afterRing;
        this.heap = u64(state + ShmemKiLayout.S_HEAP);
        this.heapNic = u64(state + ShmemKiLayout.S_HEAP_NIC);
        this.heapBytes = u64(state + ShmemKiLayout.S_HEAP_BYTES);
        this.heapLkey = u64(state + ShmemKiLayout.S_HEAP_LKEY);
        this.staging = u64(state + ShmemKiLayout.S_STAGING);
        this.stagingNic = u64(state + ShmemKiLayout.S_STAGING_NIC);
        this.stagingLkey = u64(state + ShmemKiLayout.S_STAGING_LKEY);
        this.timeoutNs = u64(state + ShmemKiLayout.S_TIMEOUT_NS);
        this.myPe = u32(state + ShmemKiLayout.S_MY_PE);
        this.nPes = u32(state + ShmemKiLayout.S_N_PES);
        this.pes = u64(state + ShmemKiLayout.S_PES);
        this.last = u64(state + ShmemKiLayout.S_LAST);
    }

    /**
     * Runs one block of a shmem kernel, as the host KI executor's block thread does: builds the block's context over
     * the launch's state, runs the body, then ends the block ({@code gds_shmem::block_exit}) whether the body returned
     * or threw. Applications launch through {@code HostKiExecutor.shmem}, which calls this on every block's thread.
     *
     * @param table     the launch's table
     * @param state     the address of the launch's state (checked with {@link #check})
     * @param block     the block
     * @param idler     how the block's waits idle
     * @param afterRing run after each of the block's rings, or null
     * @param body      what the block does
     */
    public static void runBlock(KiTable table, long state, int block, IdleStrategy idler, Runnable afterRing,
                                ShmemKernel body) {
        ShmemDevice device = new ShmemDevice(table, state, block, idler, afterRing);
        try {
            body.run(device);
        } finally {
            device.blockExit();
        }
    }

    /**
     * Checks a launch's state as {@code gds_shmem::init} does.
     *
     * @param table  the launch's table
     * @param segment the state
     * @param blocks  the launch's blocks
     * @throws IllegalArgumentException if the state is not one for this table and this many blocks
     */
    public static void check(KiTable table, MemorySegment segment, int blocks) {
        long state = segment.address();
        if (!segment.isNative() || segment.byteSize() < ShmemKiLayout.bytes(1, blocks) || (state & 7) != 0
                || u32(state + ShmemKiLayout.S_MAGIC) != ShmemKiLayout.MAGIC
                || u32(state + ShmemKiLayout.S_VERSION) != ShmemKiLayout.VERSION
                || u64(state + ShmemKiLayout.S_TABLE) != table.segment().address()
                || u32(state + ShmemKiLayout.S_BLOCKS) != blocks) {
            throw new IllegalArgumentException(segment + " is not a shmem KI state for this table"
                    + " and " + blocks + " blocks (prepare it with Shmem.kiPrepare and launch as many blocks)");
        }
    }

    /** @return this context's block */
    public int block() {
        return block;
    }

    /** @return this PE's number */
    public int myPe() {
        return myPe;
    }

    /** @return the number of PEs */
    public int nPes() {
        return nPes;
    }

    // ---- RMA ----

    /**
     * {@code shmem_putmem_nbi}: rings a templated write of {@code source} into {@code pe}'s {@code dest}.
     *
     * @param dest   a symmetric address (this PE's heap)
     * @param source in this PE's heap
     * @param pe     the target PE
     */
    public void putNbi(MemorySegment dest, MemorySegment source, int pe) {
        long bytes = source.byteSize();
        long doff = heapOffset(dest, bytes, 1);
        long soff = heapOffset(source, bytes, 1);
        checkPe(pe);
        if (bytes > Integer.MAX_VALUE) {
            throw fail(KiTableLayout.STATUS_INVALID, KiTableLayout.KIND_NONE, 0, "a put of " + bytes + " bytes");
        }
        if (pe == myPe) {
            MemorySegment.copy(ALL, heap + soff, ALL, heap + doff, bytes);
            VarHandle.fullFence();
            return;
        }
        send(pe, heapNic + soff, heapLkey, doff, (int) bytes, false, 0);
    }

    /**
     * {@code shmem_putmem}: as {@link #putNbi}, then waits until the data is delivered.
     *
     * @param dest   a symmetric address
     * @param source in this PE's heap
     * @param pe     the target PE
     */
    public void put(MemorySegment dest, MemorySegment source, int pe) {
        putNbi(dest, source, pe);
        if (pe != myPe) {
            quietPe(pe);
        }
    }

    /**
     * {@code shmem_uint64_p}: the value travels from the slot's staging word; returns at once.
     *
     * @param dest  a symmetric 8-byte word
     * @param value the value
     * @param pe    the target PE
     */
    public void p(MemorySegment dest, long value, int pe) {
        long doff = heapOffset(dest, 8, 8);
        checkPe(pe);
        if (pe == myPe) {
            LONG.setVolatile(ALL, heap + doff, value);
            return;
        }
        send(pe, 0, 0, doff, 8, true, value);
    }

    /**
     * {@code shmem_getmem}: after a quiet toward {@code pe}, copies from its heap as mapped in this process.
     *
     * @param dest   where the bytes go
     * @param source a symmetric address
     * @param pe     the source PE
     */
    public void get(MemorySegment dest, MemorySegment source, int pe) {
        long from = direct(source, dest.byteSize(), pe, 1);
        MemorySegment.copy(ALL, from, dest, 0, dest.byteSize());
        VarHandle.fullFence();
    }

    /** {@code shmem_quiet}: everything this context put is delivered. */
    public void quiet() {
        for (int pe = 0; pe < nPes; pe++) {
            quietPe(pe);
        }
    }

    /**
     * {@code shmem_fence}: writes to one PE are delivered in ring order (one queue pair, run in order), and direct
     * operations quiet their PE first; so only this thread's own stores need ordering.
     */
    public void fence() {
        VarHandle.fullFence();
    }

    // ---- atomics, direct ----

    /**
     * {@code shmem_atomic_fetch_add}.
     *
     * @param dest  a symmetric 8-byte-aligned word
     * @param value the addend
     * @param pe    the PE
     * @return the word's value before
     */
    public long atomicFetchAdd(MemorySegment dest, long value, int pe) {
        return (long) LONG.getAndAdd(ALL, direct(dest, 8, pe, 8), value);
    }

    /**
     * {@code shmem_atomic_add}.
     *
     * @param dest  a symmetric 8-byte-aligned word
     * @param value the addend
     * @param pe    the PE
     */
    public void atomicAdd(MemorySegment dest, long value, int pe) {
        atomicFetchAdd(dest, value, pe);
    }

    /**
     * {@code shmem_atomic_inc}.
     *
     * @param dest a symmetric 8-byte-aligned word
     * @param pe   the PE
     */
    public void atomicInc(MemorySegment dest, int pe) {
        atomicFetchAdd(dest, 1, pe);
    }

    /**
     * {@code shmem_atomic_fetch_inc}.
     *
     * @param dest a symmetric 8-byte-aligned word
     * @param pe   the PE
     * @return the word's value before
     */
    public long atomicFetchInc(MemorySegment dest, int pe) {
        return atomicFetchAdd(dest, 1, pe);
    }

    /**
     * {@code shmem_atomic_set}.
     *
     * @param dest  a symmetric 8-byte-aligned word
     * @param value the new value
     * @param pe    the PE
     */
    public void atomicSet(MemorySegment dest, long value, int pe) {
        atomicSwap(dest, value, pe);
    }

    /**
     * {@code shmem_atomic_compare_swap}.
     *
     * @param dest  a symmetric 8-byte-aligned word
     * @param cond  the expected value
     * @param value the new value
     * @param pe    the PE
     * @return the word's value before (the swap happened exactly when it equals {@code cond})
     */
    public long atomicCompareSwap(MemorySegment dest, long cond, long value, int pe) {
        return (long) LONG.compareAndExchange(ALL, direct(dest, 8, pe, 8), cond, value);
    }

    /**
     * {@code shmem_atomic_swap}.
     *
     * @param dest  a symmetric 8-byte-aligned word
     * @param value the new value
     * @param pe    the PE
     * @return the word's value before
     */
    public long atomicSwap(MemorySegment dest, long value, int pe) {
        return (long) LONG.getAndSet(ALL, direct(dest, 8, pe, 8), value);
    }

    /**
     * {@code shmem_atomic_fetch}.
     *
     * @param source a symmetric 8-byte-aligned word
     * @param pe     the PE
     * @return its value
     */
    public long atomicFetch(MemorySegment source, int pe) {
        return (long) LONG.getVolatile(ALL, direct(source, 8, pe, 8));
    }

    // ---- put with signal, waits ----

    /**
     * {@code shmem_putmem_signal_nbi}: a SET signal is a second templated write rung after the data's on the same
     * queue pair, so the signal lands after the data; an ADD quiets the PE, then adds directly.
     *
     * @param dest   a symmetric address
     * @param source in this PE's heap
     * @param sig    a symmetric 8-byte word
     * @param signal the signal value
     * @param add    ADD rather than SET
     * @param pe     the target PE
     */
    public void putSignalNbi(MemorySegment dest, MemorySegment source, MemorySegment sig, long signal, boolean add, int pe) {
        putNbi(dest, source, pe);
        if (add) {
            atomicAdd(sig, signal, pe);
        } else {
            p(sig, signal, pe);
        }
    }

    /**
     * {@code shmem_putmem_signal}: as {@link #putSignalNbi}, then waits for the delivery.
     *
     * @param dest   a symmetric address
     * @param source in this PE's heap
     * @param sig    a symmetric 8-byte word
     * @param signal the signal value
     * @param add    ADD rather than SET
     * @param pe     the target PE
     */
    public void putSignal(MemorySegment dest, MemorySegment source, MemorySegment sig, long signal, boolean add, int pe) {
        putSignalNbi(dest, source, sig, signal, add, pe);
        if (pe != myPe) {
            quietPe(pe);
        }
    }

    /**
     * {@code shmem_uint64_wait_until} on a word of this PE's heap, bounded by the state's timeout; it ends at once
     * (a {@link KiException}) when the host aborts the launch ({@link KiTable#abort()}: the job failed).
     *
     * @param ivar  a symmetric 8-byte word
     * @param cmp   {@link #CMP_EQ} ... {@link #CMP_LE}
     * @param value the operand (signed comparison)
     * @return the value that satisfied it
     */
    public long waitUntil(MemorySegment ivar, int cmp, long value) {
        long off = heapOffset(ivar, 8, 8);
        if (cmp < ShmemKiLayout.CMP_EQ || cmp > ShmemKiLayout.CMP_LE) {
            throw fail(KiTableLayout.STATUS_INVALID, KiTableLayout.KIND_NONE, 0, "comparison code " + cmp);
        }
        long at = heap + off;
        idler.reset();
        long x = (long) LONG.getAcquire(ALL, at);
        long deadline = System.nanoTime() + timeoutNs;
        int polls = 0;
        while (!holds(x, cmp, value)) {
            if (++polls % KiTableLayout.ABORT_POLLS == 0 && KiDevice.aborted(table)) {
                throw fail(KiTableLayout.STATUS_ABORTED, KiTableLayout.KIND_WAIT, table.waitCount() + (int) (off / 8),
                        "the heap word at offset " + off + " to be " + CMP_NAMES[cmp] + " " + value + " (it is " + x + ")");
            }
            if (System.nanoTime() - deadline > 0) {
                throw fail(KiTableLayout.STATUS_TIMEOUT, KiTableLayout.KIND_WAIT, table.waitCount() + (int) (off / 8),
                        "the heap word at offset " + off + " to be " + CMP_NAMES[cmp] + " " + value + " (it is " + x
                                + ") within " + timeoutNs + " ns");
            }
            idler.idle();
            x = (long) LONG.getAcquire(ALL, at);
        }
        return x;
    }

    /**
     * {@code shmem_signal_wait_until}.
     *
     * @param sig   a symmetric 8-byte word
     * @param cmp   {@link #CMP_EQ} ... {@link #CMP_LE}
     * @param value the operand
     * @return the signal's value
     */
    public long signalWaitUntil(MemorySegment sig, int cmp, long value) {
        return waitUntil(sig, cmp, value);
    }

    private static final String[] CMP_NAMES = {"EQ", "NE", "GT", "GE", "LT", "LE"};

    private static boolean holds(long x, int cmp, long v) {
        return switch (cmp) {
            case 0 -> x == v;
            case 1 -> x != v;
            case 2 -> x > v;
            case 3 -> x >= v;
            case 4 -> x < v;
            default -> x <= v;
        };
    }

    /** Patches and rings a template entry, then runs the after-ring hook, if any (the host block thread's ring). */
    private void sendTemplate(KiTable.TemplateEntry t, KiTemplateArgs a) {
        KiDevice.sendTemplate(t, a);
        if (afterRing != null) {
            afterRing.run();
        }
    }

    // ---- the end of a block ----

    /**
     * {@code gds_shmem::block_exit}: the last block rings every slot not rung yet as an empty write, then waits for every
     * slot's completion and releases it to the CPU. {@link #runBlock} calls it when the block's body returns or throws.
     */
    private void blockExit() {
        VarHandle.fullFence();
        int blocks = u32(state + ShmemKiLayout.S_BLOCKS);
        if ((int) INT.getAndAdd(ALL, state + ShmemKiLayout.S_EXITED, 1) + 1 != blocks) {
            return;
        }
        for (int pe = 0; pe < nPes; pe++) {
            long p = pes + pe * ShmemKiLayout.PE.byteSize();
            int first = u32(p + ShmemKiLayout.P_FIRST);
            int count = u32(p + ShmemKiLayout.P_COUNT);
            // From the turn, not the ticket: a slot whose ticket was taken by a block that then failed was never rung.
            for (int t = Math.min(u32(p + ShmemKiLayout.P_TURN), count); t < count; t++) {
                int j = first + t;
                sendTemplate(table.template(j), new KiTemplateArgs(stagingNic + 8L * j, 0, stagingLkey,
                        u64(p + ShmemKiLayout.P_HEAP_NIC), u64(p + ShmemKiLayout.P_RKEY)));
            }
            INT.setRelease(ALL, p + ShmemKiLayout.P_TICKET, count);
            INT.setRelease(ALL, p + ShmemKiLayout.P_TURN, count);
            for (int t = 0; t < count; t++) {
                KiTable.WaitEntry e = table.waitEntry(first + t);
                int rc = KiDevice.waitEntry(e, timeoutNs, idler, table);
                if (rc != KiDevice.OK) {
                    table.report(rc, KiTableLayout.KIND_WAIT, first + t); // an abort is recorded already
                    break;
                }
                KiDevice.signal(e);
            }
        }
    }

    // ---- slots ----

    /** Takes a ticket toward pe, patches its slot and rings it in ticket order. */
    private void send(int pe, long laddr, long lkey, long roff, int length, boolean staged, long value) {
        long p = pes + pe * ShmemKiLayout.PE.byteSize();
        int first = u32(p + ShmemKiLayout.P_FIRST);
        int count = u32(p + ShmemKiLayout.P_COUNT);
        int t = (int) INT.getAndAdd(ALL, p + ShmemKiLayout.P_TICKET, 1);
        if (t >= count) {
            throw fail(KiTableLayout.STATUS_INVALID, KiTableLayout.KIND_TEMPLATE, first + count,
                    "a slot toward PE " + pe + ": all " + count + " prepared for this launch are used (prepare more)");
        }
        int j = first + t;
        if (staged) {
            LONG.setVolatile(ALL, staging + 8L * j, value);
            laddr = stagingNic + 8L * j;
            lkey = stagingLkey;
        }
        int rc = KiDevice.waitWord(p + ShmemKiLayout.P_TURN, t, WaitCondition.EQ, timeoutNs, idler, table);
        if (rc != KiDevice.OK) {
            throw fail(rc, KiTableLayout.KIND_SEND, j,
                    "slot " + j + "'s turn to ring toward PE " + pe + " (an earlier ticket was never rung)");
        }
        sendTemplate(table.template(j), new KiTemplateArgs(laddr, length, lkey, u64(p + ShmemKiLayout.P_HEAP_NIC) + roff,
                u64(p + ShmemKiLayout.P_RKEY)));
        INT.setRelease(ALL, p + ShmemKiLayout.P_TURN, t + 1);
        INT.set(ALL, lastWord(pe), j + 1);
    }

    private void quietPe(int pe) {
        int l = (int) INT.get(ALL, lastWord(pe));
        int rc = l == 0 ? KiDevice.OK : KiDevice.waitEntry(table.waitEntry(l - 1), timeoutNs, idler, table);
        if (rc != KiDevice.OK) {
            throw fail(rc, KiTableLayout.KIND_WAIT, l - 1,
                    "the completion of slot " + (l - 1) + " toward PE " + pe + " within " + timeoutNs + " ns");
        }
    }

    private long lastWord(int pe) {
        return last + 4L * ((long) block * nPes + pe);
    }

    private long direct(MemorySegment sym, long bytes, int pe, int align) {
        long off = heapOffset(sym, bytes, align);
        checkPe(pe);
        long base = pe == myPe ? heap : u64(pes + pe * ShmemKiLayout.PE.byteSize() + ShmemKiLayout.P_MAPPED);
        if (base == 0) {
            throw fail(KiTableLayout.STATUS_INVALID, KiTableLayout.KIND_NONE, pe,
                    "PE " + pe + "'s heap mapped in this process (get and atomics go direct; this transport maps none)");
        }
        quietPe(pe);
        return base + off;
    }

    private long heapOffset(MemorySegment m, long bytes, int align) {
        long a = m.address();
        if (a < heap || bytes > heapBytes || a - heap > heapBytes - bytes || ((a - heap) & (align - 1)) != 0) {
            throw fail(KiTableLayout.STATUS_INVALID, KiTableLayout.KIND_NONE, 0, bytes + " bytes at 0x" + Long.toHexString(a)
                    + (align > 1 ? " (" + align + "-byte aligned)" : "") + " inside the symmetric heap [0x"
                    + Long.toHexString(heap) + ", 0x" + Long.toHexString(heap + heapBytes) + ")");
        }
        return a - heap;
    }

    private void checkPe(int pe) {
        if (pe < 0 || pe >= nPes) {
            throw fail(KiTableLayout.STATUS_INVALID, KiTableLayout.KIND_NONE, 0, "a PE in 0.." + (nPes - 1) + ", got " + pe);
        }
    }

    /** Records the failure (the first one wins) and makes the exception that ends the block. */
    private KiException fail(int code, int kind, int index, String expected) {
        table.report(code, kind, index); // an abort: recorded by the host already, so this does nothing
        String what = switch (code) {
            case KiTableLayout.STATUS_TIMEOUT -> "timed out waiting for ";
            case KiTableLayout.STATUS_ABORTED -> "aborted by the host (the job failed) while waiting for ";
            default -> "invalid call: expected ";
        };
        return new KiException("shmem KI block " + block + " of PE " + myPe + ": " + what + expected, table.status());
    }

    private static long u64(long address) {
        return (long) LONG.get(ALL, address);
    }

    private static int u32(long address) {
        return (int) INT.getAcquire(ALL, address);
    }
}

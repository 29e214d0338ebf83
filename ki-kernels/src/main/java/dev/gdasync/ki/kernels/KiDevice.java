package dev.gdasync.ki.kernels;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.ki.trace.KiBlockWaitEvent;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The KI device API on the host: what a kernel thread of {@code device.cuh} does, done by a Java thread
 * on raw addresses taken from a KI table. Rings are plain stores, found by the software NIC's agent as
 * it finds a GPU's; waits are bounded and return a code instead of throwing, as on the device. With the flight
 * recorder on, every wait is recorded ({@link KiBlockWaitEvent}).
 */
public final class KiDevice {
    /** Wait result: the condition holds. */
    public static final int OK = KiTableLayout.STATUS_OK;
    /** Wait result: the timeout passed first. */
    public static final int TIMEOUT = KiTableLayout.STATUS_TIMEOUT;
    /** Wait result: the entry cannot be used (an unknown condition). */
    public static final int INVALID = KiTableLayout.STATUS_INVALID;
    /** Wait result: the host aborted the launch ({@link KiTable#abort()}) while the word did not satisfy it. */
    public static final int ABORTED = KiTableLayout.STATUS_ABORTED;

    // Every byte of the process, addressed by raw address: the table holds addresses, not segments.
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong BE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private KiDevice() {
    }

    /**
     * Rings a prepared send: the doorbell record, a full fence if asked, then the doorbell.
     *
     * @param e the send entry
     */
    public static void send(KiTable.SendEntry e) {
        ring(e.dbrecAddress(), e.dbrecValue(), e.flags(), e.doorbellAddress(), e.doorbellValue());
    }

    /**
     * Patches a templated send's dynamic fields in its work request, fences, and rings it.
     *
     * @param t the template entry
     * @param a the fields
     */
    public static void sendTemplate(KiTable.TemplateEntry t, KiTemplateArgs a) {
        long wqe = t.wqeAddress();
        if ((t.flags() & KiTableLayout.TEMPLATE_MLX5) != 0) {
            // An mlx5 WQE: big-endian fields, 32-bit keys; absent fields (a SEND's remote target) are left alone.
            put(wqe, t.offSgeAddress(), BE_LONG, a.localAddress());
            putInt(wqe, t.offSgeLkey(), BE_INT, (int) a.lkey());
            putInt(wqe, t.offSgeLength(), BE_INT, a.length());
            putInt(wqe, t.offTotalLength(), BE_INT, a.length());
            put(wqe, t.offRemoteAddress(), BE_LONG, a.remoteAddress());
            putInt(wqe, t.offRkey(), BE_INT, (int) a.rkey());
        } else {
            put(wqe, t.offSgeAddress(), LE_LONG, a.localAddress());
            put(wqe, t.offSgeLkey(), LE_LONG, a.lkey());
            putInt(wqe, t.offSgeLength(), LE_INT, a.length());
            putInt(wqe, t.offTotalLength(), LE_INT, a.length());
            put(wqe, t.offRemoteAddress(), LE_LONG, a.remoteAddress());
            put(wqe, t.offRkey(), LE_LONG, a.rkey());
        }
        VarHandle.fullFence();
        ring(t.dbrecAddress(), t.dbrecValue(), t.flags(), t.doorbellAddress(), t.doorbellValue());
    }

    private static void put(long wqe, int off, ValueLayout.OfLong layout, long v) {
        if (off != KiTableLayout.FIELD_ABSENT) {
            ALL.set(layout, wqe + off, v);
        }
    }

    private static void putInt(long wqe, int off, ValueLayout.OfInt layout, int v) {
        if (off != KiTableLayout.FIELD_ABSENT) {
            ALL.set(layout, wqe + off, v);
        }
    }

    private static void ring(long dbrec, int dbrecValue, int flags, long db, long dbValue) {
        INT.setRelease(ALL, dbrec, dbrecValue);
        if ((flags & KiTableLayout.SEND_FENCE_SYSTEM) != 0) {
            VarHandle.fullFence();
        }
        LONG.setVolatile(ALL, db, dbValue);
    }

    /**
     * Waits until the 32-bit word at an address satisfies a condition, or the timeout passes.
     *
     * @param address   the word
     * @param value     the operand
     * @param condition the condition
     * @param timeoutNs the bound
     * @param idler     how this thread idles between loads
     * @return {@link #OK} or {@link #TIMEOUT}
     */
    public static int waitWord(long address, int value, WaitCondition condition, long timeoutNs, IdleStrategy idler) {
        return waitWord(address, value, condition, timeoutNs, idler, null);
    }

    /**
     * Waits until the 32-bit word at an address satisfies a condition, the timeout passes, or the host aborts the
     * launch of a table (device.cuh's {@code wait_word} with its table).
     *
     * @param address   the word
     * @param value     the operand
     * @param condition the condition
     * @param timeoutNs the bound
     * @param idler     how this thread idles between loads
     * @param table     the launch's table, whose status code is watched; null: none
     * @return {@link #OK}, {@link #TIMEOUT} or {@link #ABORTED}
     */
    public static int waitWord(long address, int value, WaitCondition condition, long timeoutNs, IdleStrategy idler,
                               KiTable table) {
        KiBlockWaitEvent event = new KiBlockWaitEvent();
        event.begin();
        int rc = await(address, value, condition, timeoutNs, idler, table);
        if (event.shouldCommit()) {
            event.address = address;
            event.value = value;
            event.condition = condition.name();
            event.result = rc == OK ? "OK" : rc == ABORTED ? "ABORTED" : "TIMEOUT";
            event.commit();
        }
        return rc;
    }

    private static int await(long address, int value, WaitCondition condition, long timeoutNs, IdleStrategy idler,
                             KiTable table) {
        idler.reset();
        if (condition.test((int) INT.getAcquire(ALL, address), value)) {
            return OK;
        }
        long deadline = System.nanoTime() + timeoutNs;
        int polls = 0;
        while (!condition.test((int) INT.getAcquire(ALL, address), value)) {
            if (++polls % KiTableLayout.ABORT_POLLS == 0 && aborted(table)) {
                return ABORTED;
            }
            if (System.nanoTime() - deadline > 0) {
                return TIMEOUT;
            }
            idler.idle();
        }
        return OK;
    }

    /**
     * Whether the host aborted a launch: its table's status code is {@link #ABORTED} (device.cuh's
     * {@code aborted}). What a wait loop of a kernel polls between looks at its own word.
     *
     * @param table the launch's table; null: never
     * @return whether it was aborted
     */
    public static boolean aborted(KiTable table) {
        return table != null && table.statusCode() == ABORTED;
    }

    /**
     * Waits on a wait entry's word.
     *
     * @param e         the wait entry
     * @param timeoutNs the bound
     * @param idler     how this thread idles between loads
     * @return {@link #OK} or {@link #TIMEOUT}
     */
    public static int waitEntry(KiTable.WaitEntry e, long timeoutNs, IdleStrategy idler) {
        return waitEntry(e, timeoutNs, idler, null);
    }

    /**
     * Waits on a wait entry's word, watching its table for the host's abort.
     *
     * @param e         the wait entry
     * @param timeoutNs the bound
     * @param idler     how this thread idles between loads
     * @param table     the entry's table; null: not watched
     * @return {@link #OK}, {@link #TIMEOUT} or {@link #ABORTED}
     */
    public static int waitEntry(KiTable.WaitEntry e, long timeoutNs, IdleStrategy idler, KiTable table) {
        int rc = waitWord(e.wordAddress(), e.value(), e.condition(), timeoutNs, idler, table);
        VarHandle.fullFence();
        return rc;
    }

    /**
     * Releases a waited CQE to the CPU, if the entry has a release word.
     *
     * @param e the wait entry
     */
    public static void signal(KiTable.WaitEntry e) {
        if (e.flagAddress() != 0) {
            INT.setRelease(ALL, e.flagAddress(), e.flagValue());
        }
    }

    /**
     * Busy work of a fixed length on the clock (LibMP's KERNEL_TIME).
     *
     * @param nanos how long
     */
    public static void spin(long nanos) {
        if (nanos <= 0) {
            return;
        }
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    /**
     * Reads a 32-bit word with acquire semantics.
     *
     * @param address the word
     * @return its value
     */
    public static int load32(long address) {
        return (int) INT.getAcquire(ALL, address);
    }

    /**
     * Stores a 32-bit word with release semantics.
     *
     * @param address the word
     * @param value   the value
     */
    public static void store32(long address, int value) {
        INT.setRelease(ALL, address, value);
    }

    /**
     * Atomically adds to a 32-bit word.
     *
     * @param address the word
     * @param delta   what to add
     * @return the value before
     */
    public static int fetchAdd32(long address, int delta) {
        return (int) INT.getAndAdd(ALL, address, delta);
    }
}

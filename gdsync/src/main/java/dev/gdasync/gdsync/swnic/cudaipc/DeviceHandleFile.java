package dev.gdasync.gdsync.swnic.cudaipc;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.swnic.core.Layouts;

import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The file {@code device-<id>} ({@link Layouts.Device}) that publishes a device region's CUDA IPC handle,
 * and the protocol that keeps the owner from freeing memory a peer still maps.
 *
 * <p>The importer claims a slot with its pid, then checks that the region is still live; the owner marks
 * the region closing, then waits until no slot names a live process. Both steps are sequentially
 * consistent (CAS and volatile accesses), so either the importer sees "closing" and backs off, or the
 * owner sees the importer's slot and waits for it.
 */
public final class DeviceHandleFile {
    /** A slot was claimed but the region is closing: the importer must not map it. */
    public static final int CLOSING = -1;
    /** Every slot is taken. */
    public static final int FULL = -2;

    private DeviceHandleFile() {
    }

    // ---- owner ----

    /**
     * Creates and fills the file of a device region.
     *
     * @return the mapping (owned by {@code arena}), state live
     */
    public static MemorySegment create(ShmDirectory directory, Arena arena, long regionId, int device, long length, long address,
                                byte[] handle, int handleResult) {
        if (handle.length != Layouts.Device.HANDLE_BYTES) {
            throw new IllegalArgumentException("a CUDA IPC handle has " + Layouts.Device.HANDLE_BYTES + " bytes, got "
                    + handle.length);
        }
        MemorySegment f = directory.createFile(Layouts.Device.fileName(regionId), Layouts.Device.SIZE, arena);
        f.set(JAVA_INT, Layouts.Device.OFF_VERSION, Layouts.VERSION);
        f.set(JAVA_INT, Layouts.Device.OFF_DEVICE, device);
        f.set(JAVA_LONG, Layouts.Device.OFF_REGION_ID, regionId);
        f.set(JAVA_LONG, Layouts.Device.OFF_LENGTH, length);
        f.set(JAVA_LONG, Layouts.Device.OFF_ADDRESS, address);
        f.set(JAVA_INT, Layouts.Device.OFF_HANDLE_RESULT, handleResult);
        MemorySegment.copy(handle, 0, f, JAVA_BYTE, Layouts.Device.OFF_HANDLE, handle.length);
        INT.setRelease(f, Layouts.Device.OFF_STATE, Layouts.Device.STATE_LIVE);
        LONG.setRelease(f, Layouts.Device.OFF_MAGIC, Layouts.Device.MAGIC);
        return f;
    }

    /** The owner begins to free the region: importers unmap it at their next sweep. */
    public static void markClosing(MemorySegment f) {
        INT.setVolatile(f, Layouts.Device.OFF_STATE, Layouts.Device.STATE_CLOSING);
    }

    /**
     * Waits until no slot names a live process.
     *
     * @param timeout the longest wait
     * @return null when none does, else a description of the importers still mapping the region
     */
    public static String awaitImporters(MemorySegment f, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long park = 50_000;
        for (;;) {
            String holders = liveImporters(f);
            if (holders == null) {
                return null;
            }
            if (System.nanoTime() - deadline >= 0) {
                return holders;
            }
            LockSupport.parkNanos(park);
            park = Math.min(park * 2, 5_000_000);
        }
    }

    private static String liveImporters(MemorySegment f) {
        StringBuilder holders = null;
        for (int i = 0; i < Layouts.Device.SLOT_COUNT; i++) {
            long s = Layouts.Device.slot(i);
            long pid = (long) LONG.getVolatile(f, s + Layouts.Device.SLOT_OFF_PID);
            if (pid == 0) {
                continue;
            }
            long start = (long) LONG.getVolatile(f, s + Layouts.Device.SLOT_OFF_START_MILLIS);
            if (ShmDirectory.isAlive(pid, start)) {
                holders = holders == null ? new StringBuilder("pid " + pid) : holders.append(", pid ").append(pid);
            }
        }
        return holders == null ? null : holders.toString();
    }

    // ---- importer ----

    /**
     * Maps a peer's file read-write and checks it.
     *
     * @return the mapping, or null if the file is missing or not the file of that region (the owner freed it)
     */
    public static MemorySegment open(Path peerDirectory, long regionId, Arena arena) {
        MemorySegment f;
        try {
            f = ShmDirectory.mapExisting(peerDirectory.resolve(Layouts.Device.fileName(regionId)), true, arena);
        } catch (UncheckedIOException | IllegalStateException e) {
            return null;
        }
        if (f.byteSize() < Layouts.Device.SIZE
                || (long) LONG.getAcquire(f, Layouts.Device.OFF_MAGIC) != Layouts.Device.MAGIC
                || f.get(JAVA_INT, Layouts.Device.OFF_VERSION) != Layouts.VERSION
                || f.get(JAVA_LONG, Layouts.Device.OFF_REGION_ID) != regionId) {
            return null;
        }
        return f;
    }

    /**
     * Claims a slot for this process, then checks that the region is still live.
     *
     * @return the slot index, {@link #CLOSING} (no slot kept) or {@link #FULL}
     */
    public static int claim(MemorySegment f, long pid, long startMillis) {
        for (int i = 0; i < Layouts.Device.SLOT_COUNT; i++) {
            long s = Layouts.Device.slot(i);
            if ((long) LONG.getVolatile(f, s + Layouts.Device.SLOT_OFF_PID) == 0
                    && LONG.compareAndSet(f, s + Layouts.Device.SLOT_OFF_PID, 0L, pid)) {
                LONG.setVolatile(f, s + Layouts.Device.SLOT_OFF_START_MILLIS, startMillis);
                if (!isLive(f)) {
                    release(f, i);
                    return CLOSING;
                }
                return i;
            }
        }
        return FULL;
    }

    /** Frees a slot claimed by {@link #claim}, after the mapping was closed. */
    public static void release(MemorySegment f, int slot) {
        long s = Layouts.Device.slot(slot);
        LONG.setVolatile(f, s + Layouts.Device.SLOT_OFF_START_MILLIS, 0L);
        LONG.setVolatile(f, s + Layouts.Device.SLOT_OFF_PID, 0L);
    }

    /** @return whether the owner has not begun to free the region */
    public static boolean isLive(MemorySegment f) {
        return (int) INT.getVolatile(f, Layouts.Device.OFF_STATE) == Layouts.Device.STATE_LIVE;
    }

    public static byte[] handle(MemorySegment f) {
        return f.asSlice(Layouts.Device.OFF_HANDLE, Layouts.Device.HANDLE_BYTES).toArray(JAVA_BYTE);
    }

    /** @return 0 when the owner published a handle, else the driver's result when it could not */
    public static int handleResult(MemorySegment f) {
        return f.get(JAVA_INT, Layouts.Device.OFF_HANDLE_RESULT);
    }

    public static int device(MemorySegment f) {
        return f.get(JAVA_INT, Layouts.Device.OFF_DEVICE);
    }

    public static long length(MemorySegment f) {
        return f.get(JAVA_LONG, Layouts.Device.OFF_LENGTH);
    }
}

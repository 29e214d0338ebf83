package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.cuda.DeviceRegion;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePair;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Helpers of the device-memory child JVMs ({@link DeviceScenariosMain}, {@link DevicePeerMain}): payloads,
 * device memory read back with {@code cuMemcpyDtoH}, bounded waits, and one line of output per scenario
 * ({@code ok <name>} or {@code FAIL <name>: <why>}) for the parent test to check.
 */
final class DeviceTestSupport {
    static final Duration WAIT = Duration.ofSeconds(60);

    private DeviceTestSupport() {
    }

    /** A body that may throw anything. */
    interface Body {
        void run() throws Exception;
    }

    /** Runs a scenario and prints its outcome; never throws. */
    static void scenario(String name, Body body) {
        try {
            body.run();
            System.out.println("ok " + name);
        } catch (Throwable t) {
            System.out.println("FAIL " + name + ": " + t);
            t.printStackTrace(System.out);
        }
        System.out.flush();
    }

    static void check(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }

    /** @return {@code len} deterministic bytes for a seed, never all zero */
    static byte[] pattern(int seed, int len) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (seed * 131 + i * 31 + (i >>> 8) * 7 + 1);
        }
        return b;
    }

    /** Reads device memory back with {@code cuMemcpyDtoH}. */
    static byte[] read(DeviceRegion r, long offset, int len) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(Math.max(len, 1));
            r.copyToHost(offset, host.asSlice(0, len));
            return host.asSlice(0, len).toArray(JAVA_BYTE);
        }
    }

    /** Writes device memory with {@code cuMemcpyHtoD}. */
    static void write(DeviceRegion r, long offset, byte[] data) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(Math.max(data.length, 1));
            MemorySegment.copy(data, 0, host, JAVA_BYTE, 0, data.length);
            r.copyFromHost(offset, host.asSlice(0, data.length));
        }
    }

    static byte[] read(MemorySegment s, long offset, int len) {
        return s.asSlice(offset, len).toArray(JAVA_BYTE);
    }

    static void write(MemorySegment s, long offset, byte[] data) {
        MemorySegment.copy(data, 0, s, JAVA_BYTE, offset, data.length);
    }

    static void checkBytes(byte[] expected, byte[] actual, String what) {
        if (!Arrays.equals(expected, actual)) {
            int i = Arrays.mismatch(expected, actual);
            throw new AssertionError(what + ": " + actual.length + " bytes differ from the " + expected.length
                    + " expected, first at " + i + " (expected " + (i < expected.length ? expected[i] : "end") + ", got "
                    + (i < actual.length ? actual[i] : "end") + ")");
        }
    }

    static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    /** Polls until one completion arrives; fails after {@link #WAIT}. */
    static Completion await(CompletionQueue cq) {
        Completion c = new Completion();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (cq.poll(c) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no completion on " + cq.name() + " within " + WAIT.toSeconds() + " s");
            }
            LockSupport.parkNanos(20_000);
        }
        return c;
    }

    static Completion awaitSuccess(CompletionQueue cq) {
        Completion c = await(cq);
        check(c.isSuccess(), "expected success on " + cq.name() + ", got " + c);
        return c;
    }

    static Completion awaitFailure(CompletionQueue cq, CompletionStatus status, ErrorDetail detail) {
        Completion c = await(cq);
        check(c.status() == status && c.detail() == detail, "expected " + status + " / " + detail + " on " + cq.name()
                + ", got " + c);
        return c;
    }

    /** Waits until a queue pair reaches a state; fails after {@link #WAIT}. */
    /**
     * Waits until this process maps none of the peer's device regions: a queue pair can show the error state (its
     * peer closed it) before the NIC's agent, in its next sweep, sees the owner go and unmaps its memory.
     */
    static void awaitNoPeerMappings(QueuePair qp) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (dev.gdasync.gdsync.swnic.shm.ShmTransport.peerMappings(qp) != 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("mappings left: " + dev.gdasync.gdsync.swnic.shm.ShmTransport.peerMappings(qp)
                        + " of " + qp + " " + WAIT.toSeconds() + " s after its owner went away");
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    static void awaitState(QueuePair qp, QpState state) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (qp.state() != state) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(qp + " did not reach " + state + " within " + WAIT.toSeconds() + " s");
            }
            LockSupport.parkNanos(1_000_000);
        }
    }
}

package dev.gdasync.test.harness;

import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;

import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Assertions and small helpers shared by the multi-process tests. */
public final class Checks {
    /** The bound on anything that must merely not hang. */
    public static final Duration NO_HANG = Duration.ofSeconds(10);

    private Checks() {
    }

    /** @return a fresh job id for one test */
    public static String jobId(String prefix) {
        return prefix + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
    }

    /**
     * Polls until a completion arrives.
     *
     * @return the completion
     */
    public static Peer.Cqe awaitCqe(Peer p, String qp, Peer.Cq cq, Duration timeout) {
        Peer.Cqe c = p.poll(qp, cq, timeout);
        if (c == null) {
            fail("no " + cq + " completion on " + p.name() + "'s " + qp + " within " + timeout.toMillis() + " ms (queue pair "
                    + p.status(qp) + ")");
        }
        return c;
    }

    /** Polls for a completion and checks it succeeded with the given fields. */
    public static Peer.Cqe expectSuccess(Peer p, String qp, Peer.Cq cq, long wrId, CompletionOpcode opcode, int bytes) {
        Peer.Cqe c = awaitCqe(p, qp, cq, NO_HANG);
        String where = p.name() + " " + qp + " " + cq + ": " + c;
        assertEquals(CompletionStatus.SUCCESS, c.status(), where);
        assertEquals(wrId, c.wrId(), "wrId, " + where);
        assertEquals(opcode, c.opcode(), "opcode, " + where);
        assertEquals(bytes, c.byteLength(), "byte length, " + where);
        return c;
    }

    /** Polls for a completion and checks its status and detail. */
    public static Peer.Cqe expectError(Peer p, String qp, Peer.Cq cq, long wrId, CompletionStatus status, ErrorDetail detail) {
        Peer.Cqe c = awaitCqe(p, qp, cq, NO_HANG);
        String where = p.name() + " " + qp + " " + cq + ": " + c;
        assertEquals(wrId, c.wrId(), "wrId, " + where);
        assertEquals(status, c.status(), where);
        assertEquals(detail, c.detail(), where);
        return c;
    }

    /** Checks that no completion is waiting (after a short grace). */
    public static void expectNoCqe(Peer p, String qp, Peer.Cq cq) {
        Peer.Cqe c = p.poll(qp, cq, Duration.ofMillis(50));
        if (c != null) {
            fail("unexpected " + cq + " completion on " + p.name() + "'s " + qp + ": " + c);
        }
    }

    /** Byte-for-byte equality with the first differing index in the message. */
    public static void assertBytes(byte[] expected, byte[] actual, String what) {
        int i = Arrays.mismatch(expected, actual);
        if (i >= 0) {
            int from = Math.max(0, i - 4);
            fail(what + ": differs at byte " + i + " of " + expected.length + " (expected ..."
                    + hex(expected, from, i + 8) + ", got ..." + hex(actual, from, i + 8) + ")");
        }
    }

    private static String hex(byte[] b, int from, int to) {
        return HexFormat.of().formatHex(b, Math.min(from, b.length), Math.min(to, b.length));
    }

    /** Checks a region range of a peer still holds a seed's pattern (filled from offset {@code base}). */
    public static void assertPattern(Peer p, String region, long base, long offset, int length, long seed, String what) {
        assertBytes(Payloads.pattern(seed, offset - base, length), p.read(region, offset, length),
                what + " (" + p.name() + " " + region + " [" + offset + ", +" + length + "))");
    }

    /**
     * Waits until a condition holds.
     *
     * @param what    for the failure message
     * @param timeout the bound
     * @param cond    the condition
     * @return the nanoseconds it took
     */
    public static long awaitTrue(String what, Duration timeout, BooleanSupplier cond) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + timeout.toMillis() + " ms: " + what);
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted waiting for " + what);
            }
        }
        return System.nanoTime() - start;
    }

    /** Checks a traffic stream ended cleanly with every message through. */
    public static void assertClean(Traffic.Result r, long count, String what) {
        assertTrue(r.failure() == null, what + " failed: " + r.failure() + " (" + r + ")");
        assertEquals(0, r.errors(), what + " had error completions: " + r);
        assertEquals(count, r.ok(), what + " delivered: " + r);
        assertEquals(0, r.outstanding(), what + " left requests outstanding: " + r);
    }
}

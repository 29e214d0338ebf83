package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpException;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The wait and test family on this PE's own heap words ({@code wait_until}, {@code test} and their all/any/some
 * forms, the signal's wait and fetch): checked words read with acquire semantics, and waits that idle as every wait
 * for a peer does and end with an {@link MpException} naming the words when the job fails or the Mp's timeout passes.
 */
final class WordWaits {
    private static final VarHandle LONG = JAVA_LONG.varHandle();

    private final Mp mp;
    private final MemorySegment heapMemory;
    private final HeapTargets targets;
    /** The runtime's own check that it is open and no KI launch is prepared. */
    private final Runnable requireOpen;

    WordWaits(Mp mp, MemorySegment heapMemory, HeapTargets targets, Runnable requireOpen) {
        this.mp = mp;
        this.heapMemory = heapMemory;
        this.targets = targets;
        this.requireOpen = requireOpen;
    }

    private int myPe() {
        return mp.rank();
    }

    long signalWaitUntil(MemorySegment sigAddr, ShmemCmp cmp, long value) {
        Objects.requireNonNull(cmp, "cmp must not be null");
        long offset = targets.atomicTarget(sigAddr, myPe());
        long[] seen = new long[1];
        await(() -> cmp.holds(seen[0] = (long) LONG.getAcquire(heapMemory, offset), value),
                () -> "the word at heap offset " + offset + " " + cmp + " " + value + " (it holds " + seen[0] + ")");
        return seen[0];
    }

    long signalFetch(MemorySegment sigAddr) {
        return (long) LONG.getAcquire(heapMemory, targets.atomicTarget(sigAddr, myPe()));
    }

    boolean test(MemorySegment ivar, ShmemCmp cmp, long value) {
        Objects.requireNonNull(cmp, "cmp must not be null");
        long offset = targets.atomicTarget(ivar, myPe());
        return cmp.holds((long) LONG.getAcquire(heapMemory, offset), value);
    }

    void waitUntilAll(MemorySegment ivars, int[] status, ShmemCmp cmp, long value) {
        WordArray w = words(ivars, status, cmp);
        await(() -> w.count(value, null) == w.included(), () -> w.describe(value, "all of"));
    }

    int waitUntilAny(MemorySegment ivars, int[] status, ShmemCmp cmp, long value) {
        WordArray w = words(ivars, status, cmp);
        if (w.included() == 0) {
            return -1;
        }
        int[] found = new int[1];
        await(() -> (found[0] = w.first(value)) >= 0, () -> w.describe(value, "any of"));
        return found[0];
    }

    int waitUntilSome(MemorySegment ivars, int[] indices, int[] status, ShmemCmp cmp, long value) {
        WordArray w = wordsWithIndices(ivars, indices, status, cmp);
        if (w.included() == 0) {
            return 0;
        }
        int[] found = new int[1];
        await(() -> (found[0] = w.count(value, indices)) > 0, () -> w.describe(value, "some of"));
        return found[0];
    }

    boolean testAll(MemorySegment ivars, int[] status, ShmemCmp cmp, long value) {
        WordArray w = words(ivars, status, cmp);
        return w.count(value, null) == w.included();
    }

    int testAny(MemorySegment ivars, int[] status, ShmemCmp cmp, long value) {
        return words(ivars, status, cmp).first(value);
    }

    int testSome(MemorySegment ivars, int[] indices, int[] status, ShmemCmp cmp, long value) {
        return wordsWithIndices(ivars, indices, status, cmp).count(value, indices);
    }

    /**
     * Waits until {@code done} holds, idling as every wait for a peer does ({@link BackoffPolicy#PEER_WAIT}, parked
     * through the NIC so that a delivery can wake it); fails when the job fails or after the Mp's wait timeout, naming
     * what it waited for.
     */
    void await(BooleanSupplier done, Supplier<String> what) {
        long deadline = System.nanoTime() + mp.config().waitTimeout().toNanos();
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.PEER_WAIT, nanos -> mp.nic().awaitPeers(nanos, done));
        while (!done.getAsBoolean()) {
            String failed = mp.failure();
            if (failed != null) {
                throw new MpException("PE " + myPe() + " waiting for " + what.get() + ": the job failed: " + failed,
                        null, ErrorDetail.JOB_FAILED);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new MpException("PE " + myPe() + " waited " + mp.config().waitTimeout() + " for " + what.get(),
                        null, null);
            }
            idler.idle();
        }
    }

    /** An array of 64-bit words of this PE's heap that the wait-until-all/any/some forms look at. */
    private final class WordArray {
        private final long offset;
        private final int count;
        private final int[] status;
        private final ShmemCmp cmp;

        WordArray(long offset, int count, int[] status, ShmemCmp cmp) {
            this.offset = offset;
            this.count = count;
            this.status = status;
            this.cmp = cmp;
        }

        private boolean left(int i) {
            return status != null && status[i] != 0;
        }

        private boolean holds(int i, long value) {
            return cmp.holds((long) LONG.getAcquire(heapMemory, offset + 8L * i), value);
        }

        int included() {
            int n = 0;
            for (int i = 0; i < count; i++) {
                n += left(i) ? 0 : 1;
            }
            return n;
        }

        /** @return how many included words hold, writing their indices to {@code indices} when not null */
        int count(long value, int[] indices) {
            int n = 0;
            for (int i = 0; i < count; i++) {
                if (!left(i) && holds(i, value)) {
                    if (indices != null) {
                        indices[n] = i;
                    }
                    n++;
                }
            }
            return n;
        }

        int first(long value) {
            for (int i = 0; i < count; i++) {
                if (!left(i) && holds(i, value)) {
                    return i;
                }
            }
            return -1;
        }

        String describe(long value, String how) {
            StringBuilder b = new StringBuilder(how + " the " + count + " words at heap offset " + offset + " " + cmp
                    + " " + value + " (they hold");
            for (int i = 0; i < Math.min(count, 16); i++) {
                b.append(' ').append(left(i) ? "-" : String.valueOf((long) LONG.getAcquire(heapMemory, offset + 8L * i)));
            }
            return b.append(count > 16 ? " ...)" : ")").toString();
        }
    }

    WordArray words(MemorySegment ivars, int[] status, ShmemCmp cmp) {
        Objects.requireNonNull(ivars, "ivars must not be null");
        Objects.requireNonNull(cmp, "cmp must not be null");
        requireOpen.run();
        targets.requireAligned(ivars, 8, "ivars");
        if (ivars.byteSize() % 8 != 0) {
            throw new IllegalArgumentException("ivars is " + ivars.byteSize() + " bytes: whole 64-bit words only");
        }
        int count = Math.toIntExact(ivars.byteSize() / 8);
        long offset = count == 0 ? 0 : targets.target(ivars, ivars.byteSize(), myPe(), "ivars");
        if (status != null && status.length != count) {
            throw new IllegalArgumentException("status has " + status.length + " entries for " + count + " words");
        }
        return new WordArray(offset, count, status, cmp);
    }

    WordArray wordsWithIndices(MemorySegment ivars, int[] indices, int[] status, ShmemCmp cmp) {
        Objects.requireNonNull(indices, "indices must not be null");
        WordArray w = words(ivars, status, cmp);
        if (indices.length < w.count) {
            throw new IllegalArgumentException("indices has " + indices.length + " entries for " + w.count + " words");
        }
        return w;
    }
}

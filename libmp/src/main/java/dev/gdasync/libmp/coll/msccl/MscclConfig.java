package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.concurrent.BackoffPolicy;

import java.time.Duration;
import java.util.Objects;

/**
 * How an {@link MscclRuntime} runs programs.
 *
 * @param slotBytes       bytes of one connection slot: a message carries one tile of each chunk of a step, so a
 *                        tile is {@code slotBytes / (the program's largest cnt)} bytes; a multiple of 8
 * @param slots           slots per connection (messages in flight before the sender waits for the receiver)
 * @param maxThreadBlocks thread blocks per rank the runtime has connection memory for
 * @param timeout         how long a run may take before it fails naming the blocked thread blocks
 * @param threads         true: every thread block of a blocking run runs on a thread of its own (the caller's
 *                        thread watches, and on the put path moves the data); false (the default): the caller's
 *                        thread runs all of them in turn, each as far as it can go, which on few CPUs is faster
 *                        (docs/msccl.md)
 */
public record MscclConfig(int slotBytes, int slots, int maxThreadBlocks, Duration timeout, boolean threads) {
    /**
     * How the stream and KI forms' waits idle: 64 spins, 192 yields, then parks of 20 µs. The stream interpreter's
     * block and NIC streams wait with it, and a host KI executor that runs the KI form should too
     * ({@code HostKiExecutor.Options.withWaitBackoff}): ranks, streams and the NIC's agents share few CPUs, and a
     * low-latency spin (20 000 spins before the first park) starves the agent that moves the data. Blocking runs idle
     * like the built-in collectives instead (spin, yield when ranks outnumber CPUs), since on the direct path no
     * other thread moves their data (docs/msccl.md).
     */
    public static final BackoffPolicy WAIT_BACKOFF = new BackoffPolicy(64, 192, 20_000, 20_000);

    /** Checks the values. */
    public MscclConfig {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (slotBytes < 8 || slotBytes % 8 != 0) {
            throw new IllegalArgumentException("slotBytes must be a positive multiple of 8, got " + slotBytes);
        }
        if (slots < 1 || slots > 64) {
            throw new IllegalArgumentException("slots must be 1..64, got " + slots);
        }
        if (maxThreadBlocks < 1 || maxThreadBlocks > 128) {
            throw new IllegalArgumentException("maxThreadBlocks must be 1..128, got " + maxThreadBlocks);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }

    /** @return 64 KiB slots, 4 per connection, 16 thread blocks, 30 s, all thread blocks on the caller's thread */
    public static MscclConfig defaults() {
        return new MscclConfig(64 * 1024, 4, 16, Duration.ofSeconds(30), false);
    }

    /**
     * @param bytes the slot size
     * @return this config with it
     */
    public MscclConfig withSlotBytes(int bytes) {
        return new MscclConfig(bytes, slots, maxThreadBlocks, timeout, threads);
    }

    /**
     * @param t the timeout
     * @return this config with it
     */
    public MscclConfig withTimeout(Duration t) {
        return new MscclConfig(slotBytes, slots, maxThreadBlocks, t, threads);
    }

    /**
     * @param onThreads whether each thread block gets a thread
     * @return this config with it
     */
    public MscclConfig withThreads(boolean onThreads) {
        return new MscclConfig(slotBytes, slots, maxThreadBlocks, timeout, onThreads);
    }

    /** @return the bytes of one thread block's connection memory: slots, their flags, an acknowledgement word */
    long regionBytes() {
        long r = (long) slots * slotBytes + 8L * slots + 8;
        return (r + 63) & ~63L;
    }

    /** @return where the slots' flags start in a region */
    long flagsOffset() {
        return (long) slots * slotBytes;
    }

    /** @return where the acknowledgement word lies in a region */
    long ackOffset() {
        return flagsOffset() + 8L * slots;
    }
}

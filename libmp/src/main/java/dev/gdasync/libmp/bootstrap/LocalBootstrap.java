package dev.gdasync.libmp.bootstrap;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Ranks as threads of one JVM, for tests: {@link #group(int, Duration)} makes one bootstrap per rank,
 * each to be used by its own thread.
 *
 * <p>A collective waits for every rank of the group. It fails with a {@link BootstrapException} when a
 * rank that has not joined it closed its bootstrap (or left after an error), when ranks call different
 * collectives (an {@code allGather} against a {@code barrier}), or after the group's timeout, naming
 * the ranks it waited for. A rank whose collective failed has left the group: its later calls fail, and
 * so do the other ranks' next collectives, at once.
 */
public final class LocalBootstrap implements Bootstrap {
    /** The timeout of {@link #group(int)}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private final Group group;
    private final int rank;
    private long nextSeq;
    private volatile boolean closed;

    private LocalBootstrap(Group group, int rank) {
        this.group = group;
        this.rank = rank;
    }

    /**
     * Makes a group of {@code size} ranks with the {@link #DEFAULT_TIMEOUT}.
     *
     * @param size the number of ranks, at least 1
     * @return one bootstrap per rank, indexed by rank
     */
    public static List<Bootstrap> group(int size) {
        return group(size, DEFAULT_TIMEOUT);
    }

    /**
     * Makes a group of {@code size} ranks that share a fresh job id.
     *
     * @param size    the number of ranks, at least 1
     * @param timeout how long a collective waits for the other ranks
     * @return one bootstrap per rank, indexed by rank
     */
    public static List<Bootstrap> group(int size, Duration timeout) {
        if (size < 1) {
            throw new IllegalArgumentException("a group needs at least one rank, not " + size);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("the timeout must be positive, not " + timeout);
        }
        Group g = new Group(size, JobIds.random("local"), timeout);
        List<Bootstrap> ranks = new ArrayList<>(size);
        for (int r = 0; r < size; r++) {
            ranks.add(new LocalBootstrap(g, r));
        }
        return List.copyOf(ranks);
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return group.size;
    }

    @Override
    public String jobId() {
        return group.jobId;
    }

    @Override
    public List<byte[]> allGather(byte[] mine) {
        return collective("allGather", mine.clone());
    }

    @Override
    public void barrier() {
        collective("barrier", new byte[0]);
    }

    private List<byte[]> collective(String kind, byte[] mine) {
        String failed = group.failure.reason();
        if (failed != null) {
            throw new BootstrapException("rank " + rank + " of job " + group.jobId + ": " + kind
                    + " failed: " + failed);
        }
        if (closed) {
            throw new BootstrapException("rank " + rank + " of job " + group.jobId + ": " + kind
                    + " on a closed bootstrap");
        }
        long seq = nextSeq++;
        try {
            return group.join(rank, seq, kind, mine);
        } catch (BootstrapException e) {
            close(); // a failed rank leaves the group, so the others fail fast instead of timing out
            throw e;
        }
    }

    @Override
    public String failure() {
        return group.failure.reason();
    }

    @Override
    public void onFailure(Consumer<String> listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        group.failure.listen(listener);
    }

    /** Fails the job of every rank of the group at once; their collectives in progress fail too. */
    @Override
    public void abort(String reason) {
        Objects.requireNonNull(reason, "reason must not be null");
        group.abort(reason);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            group.leave(rank);
        }
    }

    @Override
    public String toString() {
        return "LocalBootstrap{rank " + rank + " of " + group.size + ", job " + group.jobId + "}";
    }

    /** The state the ranks of one group share. */
    private static final class Group {
        final int size;
        final String jobId;
        final long timeoutNanos;
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        final Map<Long, Round> rounds = new HashMap<>();
        final boolean[] left;
        final JobFailure failure = new JobFailure();

        Group(int size, String jobId, Duration timeout) {
            this.size = size;
            this.jobId = jobId;
            this.timeoutNanos = timeout.toNanos();
            this.left = new boolean[size];
        }

        List<byte[]> join(int rank, long seq, String kind, byte[] mine) {
            String what = "rank " + rank + " of job " + jobId + ": " + kind + " #" + seq;
            long deadline = System.nanoTime() + timeoutNanos;
            lock.lock();
            try {
                Round round = rounds.computeIfAbsent(seq, s -> new Round(kind, size));
                if (!round.kind.equals(kind)) {
                    round.error = "rank " + rank + " called " + kind + " while rank " + round.firstRank
                            + " called " + round.kind + " as collective #" + seq;
                    changed.signalAll();
                    throw new BootstrapException(what + " failed: " + round.error);
                }
                if (round.arrived == 0) {
                    round.firstRank = rank;
                }
                round.parts[rank] = mine;
                round.arrived++;
                changed.signalAll();
                while (round.arrived < size) {
                    String failed = failure.reason();
                    if (failed != null) {
                        throw new BootstrapException(what + " failed: " + failed);
                    }
                    if (round.error != null) {
                        throw new BootstrapException(what + " failed: " + round.error);
                    }
                    List<Integer> gone = new ArrayList<>();
                    for (int q = 0; q < size; q++) {
                        if (left[q] && round.parts[q] == null) {
                            gone.add(q);
                        }
                    }
                    if (!gone.isEmpty()) {
                        throw new BootstrapException(what + " failed: rank(s) " + gone
                                + " left the job (closed, or failed in an earlier collective) without joining it");
                    }
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        throw new BootstrapException(what + " timed out after "
                                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms waiting for rank(s) " + round.missing());
                    }
                    changed.awaitNanos(remaining);
                }
                round.collected++;
                if (round.collected == size) {
                    rounds.remove(seq);
                }
                List<byte[]> all = new ArrayList<>(size);
                for (byte[] part : round.parts) {
                    all.add(part.clone());
                }
                return all;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BootstrapException(what + " was interrupted", e);
            } finally {
                lock.unlock();
            }
        }

        void abort(String reason) {
            if (failure.fail(reason)) {
                lock.lock();
                try {
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        }

        void leave(int rank) {
            lock.lock();
            try {
                left[rank] = true;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** One collective: what every rank contributed so far. */
    private static final class Round {
        final String kind;
        final byte[][] parts;
        int firstRank;
        int arrived;
        int collected;
        String error;

        Round(String kind, int size) {
            this.kind = kind;
            this.parts = new byte[size][];
        }

        List<Integer> missing() {
            List<Integer> m = new ArrayList<>();
            for (int q = 0; q < parts.length; q++) {
                if (parts[q] == null) {
                    m.add(q);
                }
            }
            return m;
        }
    }
}

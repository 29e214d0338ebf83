package dev.gdasync.libmp.bootstrap;

import dev.gdasync.libmp.bootstrap.Admission.Admitted;
import dev.gdasync.libmp.bootstrap.Frames.Collective;
import dev.gdasync.libmp.bootstrap.Frames.Contribution;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Rank 0's end: one connection per member, each read by a thread of its own that queues what arrives,
 * so a member that dies is noticed at once even while rank 0 waits for another. A collective collects
 * every member's contribution and sends everyone the result. When anything fails (a member gone, the
 * timeout, members disagreeing on the collective) rank 0 sends every member an ABORT naming the cause,
 * so they fail with the real reason at once instead of at their own timeout.
 */
final class RootHub implements Hub {
    private final JobEnvironment env;
    private final Admitted[] members;
    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private volatile String failure;
    private volatile boolean closed;

    /** What a member's reader thread saw: a contribution, or the end of the connection. */
    private record Event(int rank, Contribution contribution, String error) {
    }

    private RootHub(JobEnvironment env, Admitted[] members) {
        this.env = env;
        this.members = members;
        for (int r = 1; r < members.length; r++) {
            int rank = r;
            Thread.ofPlatform().daemon().name("gdasync-bootstrap-rank" + r).start(() -> read(rank));
        }
    }

    /** Listens at the rendezvous and waits until every rank joined. */
    static RootHub open(JobEnvironment env) {
        return new RootHub(env, Admission.run(env));
    }

    private void read(int rank) {
        Admitted m = members[rank];
        try {
            while (true) {
                events.add(new Event(rank, Frames.readContribution(m.in()), null));
            }
        } catch (IOException e) {
            events.add(new Event(rank, null, Hub.describe(e)));
        }
    }

    @Override
    public List<byte[]> collective(long seq, Collective c, byte[] mine) {
        String what = c + " #" + seq;
        if (failure != null) {
            throw new BootstrapException("rank 0 of job " + env.jobId() + ": " + what + " on a bootstrap that failed: " + failure);
        }
        if (closed) {
            throw new BootstrapException("rank 0 of job " + env.jobId() + ": " + what + " on a closed bootstrap");
        }
        int size = env.size();
        byte[][] parts = new byte[size][];
        parts[0] = mine;
        int missing = size - 1;
        long deadline = System.nanoTime() + env.timeout().toNanos();
        try {
            while (missing > 0) {
                long remaining = deadline - System.nanoTime();
                Event e = remaining <= 0 ? null : events.poll(remaining, TimeUnit.NANOSECONDS);
                if (e == null) {
                    throw fail(what + " timed out after " + env.timeout().toMillis() + " ms waiting for rank(s) " + missing(parts));
                }
                if (e.error() != null) {
                    throw fail(closed ? what + ": the bootstrap was closed"
                            : "rank " + e.rank() + " is gone (" + e.error() + ") during " + what);
                }
                Contribution got = e.contribution();
                if (got.collective() != c) {
                    throw fail("rank " + e.rank() + " called " + got.collective() + " while rank 0 called " + c
                            + " as collective #" + seq + " (every rank must call the collectives in the same order)");
                }
                if (got.seq() != seq || parts[e.rank()] != null) {
                    throw fail("protocol error: rank " + e.rank() + " sent collective #" + got.seq() + " during " + what);
                }
                parts[e.rank()] = got.data();
                missing--;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw fail(what + " was interrupted");
        }
        List<byte[]> all = Arrays.asList(parts);
        for (int r = 1; r < size; r++) {
            try {
                synchronized (members[r].out()) {
                    Frames.writeResult(members[r].out(), seq, all);
                }
            } catch (IOException e) {
                throw fail("rank " + r + " is gone (" + Hub.describe(e) + ") while receiving the result of " + what);
            }
        }
        List<byte[]> copy = new ArrayList<>(size);
        for (byte[] p : parts) {
            copy.add(p.clone());
        }
        return copy;
    }

    private BootstrapException fail(String reason) {
        String message = "rank 0 of job " + env.jobId() + ": " + reason;
        failure = reason;
        abortAll(message);
        return new BootstrapException(message);
    }

    private void abortAll(String message) {
        for (int r = 1; r < members.length; r++) {
            Admitted m = members[r];
            try {
                synchronized (m.out()) {
                    Frames.writeAbort(m.out(), message);
                }
            } catch (IOException e) {
                // it learns from the closed connection
            }
            m.closeQuietly();
        }
    }

    private static List<Integer> missing(byte[][] parts) {
        List<Integer> m = new ArrayList<>();
        for (int r = 1; r < parts.length; r++) {
            if (parts[r] == null) {
                m.add(r);
            }
        }
        return m;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            for (int r = 1; r < members.length; r++) {
                members[r].closeQuietly();
            }
        }
    }
}

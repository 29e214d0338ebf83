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
import java.util.function.Consumer;

/**
 * Rank 0's end: one connection per member, each read by a thread of its own, so a member that dies is noticed at
 * once, whether or not a collective is running. A collective collects every member's contribution and sends
 * everyone the result.
 *
 * <p>When anything fails (a member's connection ends without a goodbye, a member aborts the job, the timeout,
 * members disagreeing on the collective) rank 0 fails the job: it sends every member an ABORT naming the cause,
 * so they fail with the real reason at once instead of at their own timeout, and tells its own failure
 * listeners. A member that said goodbye has left the job: a later collective that needs it fails, the job does
 * not.
 */
final class RootHub implements Hub {
    private final JobEnvironment env;
    private final Admitted[] members;
    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final JobFailure failure = new JobFailure();
    private final boolean[] left;
    private volatile boolean closed;

    /** What a member's reader thread saw: a contribution, or why the member can no longer contribute. */
    private record Event(int rank, Contribution contribution, String problem) {
    }

    private RootHub(JobEnvironment env, Admitted[] members) {
        this.env = env;
        this.members = members;
        this.left = new boolean[members.length];
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
                byte type = m.in().readByte();
                switch (type) {
                    case Frames.CONTRIBUTE -> events.add(new Event(rank, Frames.readContributionBody(m.in()), null));
                    case Frames.GOODBYE -> {
                        synchronized (left) {
                            left[rank] = true;
                        }
                    }
                    case Frames.ABORT_JOB -> {
                        String reason = Frames.readReason(m.in());
                        failJob(reason);
                        events.add(new Event(rank, null, reason));
                    }
                    default -> throw new IOException("protocol error: frame type " + type + " from rank " + rank);
                }
            }
        } catch (IOException e) {
            if (closed) {
                return;
            }
            boolean goodbye;
            synchronized (left) {
                goodbye = left[rank];
            }
            String failed = failure.reason();
            if (failed != null) {
                // The job failed already, and rank 0 closed this member's connection: that is not news.
                events.add(new Event(rank, null, failed));
            } else if (goodbye) {
                events.add(new Event(rank, null, "rank " + rank + " left the job (it closed its bootstrap)"));
            } else {
                String reason = "rank " + rank + "'s process is gone (its bootstrap connection to rank 0: "
                        + Hub.describe(e) + ")";
                failJob(reason);
                events.add(new Event(rank, null, reason));
            }
        }
    }

    @Override
    public List<byte[]> collective(long seq, Collective c, byte[] mine) {
        String what = c + " #" + seq;
        String failed = failure.reason();
        if (failed != null) {
            throw new BootstrapException("rank 0 of job " + env.jobId() + ": " + what + " failed: " + failed);
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
                if (e.problem() != null) {
                    String jobFailed = failure.reason();
                    throw fail(closed ? what + ": the bootstrap was closed"
                            : (jobFailed != null ? jobFailed : e.problem()) + ", during " + what);
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

    /** Fails the job (once: the first reason is the job's) and returns the exception for this collective. */
    private BootstrapException fail(String reason) {
        failJob(reason);
        return new BootstrapException("rank 0 of job " + env.jobId() + ": " + reason);
    }

    /** Fails the job once: every member gets an ABORT with the reason, then this rank's listeners run. */
    private void failJob(String reason) {
        if (!closed) {
            failure.fail(reason, () -> abortMembers(reason));
        }
    }

    private void abortMembers(String reason) {
        for (int r = 1; r < members.length; r++) {
            Admitted m = members[r];
            try {
                synchronized (m.out()) {
                    Frames.writeAbort(m.out(), reason);
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
    public String failure() {
        return failure.reason();
    }

    @Override
    public void onFailure(Consumer<String> listener) {
        failure.listen(listener);
    }

    @Override
    public void abort(String reason) {
        failJob(reason);
    }

    /** Says goodbye to every member (rank 0 leaves: not a failure), then closes the connections. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            for (int r = 1; r < members.length; r++) {
                Admitted m = members[r];
                try {
                    synchronized (m.out()) {
                        Frames.writeGoodbye(m.out());
                    }
                } catch (IOException e) {
                    // gone already
                }
                m.closeQuietly();
            }
        }
    }
}

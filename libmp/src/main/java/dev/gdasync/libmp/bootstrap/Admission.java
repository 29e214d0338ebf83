package dev.gdasync.libmp.bootstrap;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Rank 0's rendezvous: listens at the rendezvous address, authenticates every connection on a thread
 * of its own (so a silent or hostile client delays nobody), and admits ranks 1 to size-1 exactly once
 * each. Connections that fail the handshake are closed and logged, and the wait for the real ranks goes
 * on; a duplicate rank, or a rank that disagrees on the size or the job id, fails the job.
 *
 * <p>At most {@link #maxPending(int)} connections authenticate at once, each within {@link #HANDSHAKE_TIMEOUT} in
 * all (a client that trickles its bytes gains nothing): a connection over the cap is closed at once, so a flood of
 * connections that never speak costs a bounded number of threads. Refusals are counted and logged in warnings
 * rate-limited to one per {@link #WARNING_INTERVAL} (a flood does not flood the log); a real rank whose
 * connection was closed retries until its timeout, and gets a slot as soon as one frees.
 *
 * <p>It listens on the given loopback address when the rendezvous host is a loopback address (a job on
 * one host, as {@code scripts/mprun} starts), else on every interface of the port, so that a host name
 * that resolves to a loopback address on rank 0's own host (as Debian's {@code /etc/hosts} does) still
 * works for ranks on other hosts. The listening socket is closed once every rank joined.
 */
final class Admission {
    /** How long one connection may take to authenticate. */
    static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    /** Refusals are logged at most once per interval (with how many there were); the first at once. */
    static final Duration WARNING_INTERVAL = Duration.ofSeconds(10);
    private static final System.Logger LOG = System.getLogger(Admission.class.getPackageName());

    private final JobEnvironment env;
    private final byte[] secret;
    private final ServerSocket server;
    private final LinkedBlockingQueue<Admitted> admitted = new LinkedBlockingQueue<>();
    private final Set<Socket> handshaking = ConcurrentHashMap.newKeySet();
    private final AtomicInteger refused = new AtomicInteger();
    private final Duration handshakeTimeout;
    private final int maxPending;
    private final Semaphore pending;
    private final AtomicInteger overCap = new AtomicInteger();
    private final Warnings overCapWarnings;
    private final Warnings handshakeWarnings;
    private volatile boolean done;

    /** A connection that proved the secret, with what it says it is. */
    record Admitted(Socket socket, DataInputStream in, DataOutputStream out, Handshake.Joiner joiner) {
        void closeQuietly() {
            try {
                socket.close();
            } catch (IOException e) {
                // nothing to do
            }
        }
    }

    private Admission(JobEnvironment env, ServerSocket server, Duration handshakeTimeout, int maxPending) {
        this.env = env;
        this.secret = env.secret();
        this.server = server;
        this.handshakeTimeout = handshakeTimeout;
        this.maxPending = maxPending;
        this.pending = new Semaphore(maxPending);
        String me = "rank 0 of job " + env.jobId();
        this.overCapWarnings = new Warnings(1, n -> me + " closed " + n + " more connection(s) at once since the last"
                + " such warning: " + maxPending + " connections were already authenticating (the cap on pending handshakes)");
        this.handshakeWarnings = new Warnings(5, n -> me + " refused " + n + " more connection(s) that did not"
                + " authenticate since the last such warning");
    }

    /**
     * The cap on connections authenticating at once for a job of {@code size} ranks: every other rank may
     * connect at the same moment, with room for as many strangers, within [64, 1024].
     *
     * @param size the number of ranks
     * @return the cap
     */
    static int maxPending(int size) {
        return (int) Math.max(64, Math.min(2L * size, 1024));
    }

    /**
     * Waits until ranks 1 to size-1 joined.
     *
     * @param env the job
     * @return the members' connections, indexed by rank (index 0 is null)
     * @throws BootstrapException on timeout, a duplicate rank, a size or job id mismatch, or if the
     *                            address cannot be listened on
     */
    static Admitted[] run(JobEnvironment env) {
        return run(env, HANDSHAKE_TIMEOUT, maxPending(env.size()));
    }

    /**
     * Waits until ranks 1 to size-1 joined, with another handshake timeout and cap (for tests).
     *
     * @param env              the job
     * @param handshakeTimeout how long one connection may take to authenticate, in all
     * @param maxPending       the most connections authenticating at once, {@code >= 1}
     * @return the members' connections, indexed by rank (index 0 is null)
     * @throws BootstrapException as {@link #run(JobEnvironment)}
     */
    static Admitted[] run(JobEnvironment env, Duration handshakeTimeout, int maxPending) {
        if (maxPending < 1) {
            throw new IllegalArgumentException("maxPending must be >= 1, got " + maxPending);
        }
        Admission a = new Admission(env, listen(env), handshakeTimeout, maxPending);
        Thread acceptor = Thread.ofPlatform().daemon().name("gdasync-bootstrap-accept").start(a::acceptLoop);
        try {
            return a.admitAll();
        } finally {
            synchronized (a) {
                a.done = true; // from now on, handshakes that succeed close their connection themselves
            }
            try {
                a.server.close();
            } catch (IOException e) {
                // nothing to do
            }
            for (Socket s : a.handshaking) {
                closeQuietly(s);
            }
            for (Admitted late; (late = a.admitted.poll()) != null; ) {
                late.closeQuietly();
            }
            acceptor.interrupt();
            a.overCapWarnings.flush();
            a.handshakeWarnings.flush();
        }
    }

    private static ServerSocket listen(JobEnvironment env) {
        String where = env.rendezvous();
        try {
            InetAddress host = InetAddress.getByName(env.host());
            ServerSocket s = new ServerSocket();
            s.setReuseAddress(true);
            boolean literal = env.host().equalsIgnoreCase("localhost") || env.host().contains(":")
                    || env.host().chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'));
            InetSocketAddress bindTo = host.isLoopbackAddress() && literal
                    ? new InetSocketAddress(host, env.port()) : new InetSocketAddress(env.port());
            try {
                s.bind(bindTo, Math.max(50, env.size()));
            } catch (IOException e) {
                s.close();
                throw e;
            }
            return s;
        } catch (IOException e) {
            throw new BootstrapException("rank 0 of job " + env.jobId() + " cannot listen at the rendezvous " + where
                    + ": " + e.getMessage() + " (rank 0 must run on that host, and the port must be free)", e);
        }
    }

    private void acceptLoop() {
        while (!done) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (!pending.tryAcquire()) {
                // Over the cap: close it before reading a byte, and count it. A real rank retries.
                refuseOverCap(s);
                continue;
            }
            handshaking.add(s);
            try {
                Thread.ofPlatform().daemon().name("gdasync-bootstrap-handshake").start(() -> {
                    try {
                        authenticate(s);
                    } finally {
                        pending.release();
                    }
                });
            } catch (OutOfMemoryError | RuntimeException e) {
                // no thread for it (the process is at its limit): the connection goes, the rendezvous goes on
                handshaking.remove(s);
                pending.release();
                refuseOverCap(s);
            }
        }
    }

    private void refuseOverCap(Socket s) {
        String from = String.valueOf(s.getRemoteSocketAddress());
        closeQuietly(s);
        overCap.incrementAndGet();
        overCapWarnings.add("rank 0 of job " + env.jobId() + " closed a connection from " + from + " at once: " + maxPending
                + " connections were already authenticating (the cap on pending handshakes); more are counted and"
                + " reported at most every " + WARNING_INTERVAL.toSeconds() + " s");
    }

    private void authenticate(Socket s) {
        String from = String.valueOf(s.getRemoteSocketAddress());
        try {
            s.setTcpNoDelay(true);
            DeadlineInput deadline = new DeadlineInput(s, System.nanoTime() + handshakeTimeout.toNanos());
            DataInputStream in = new DataInputStream(new BufferedInputStream(deadline));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            Handshake.Joiner j = Handshake.admit(in, out, secret);
            deadline.disarm();
            s.setSoTimeout(0);
            handshaking.remove(s);
            synchronized (this) {
                if (!done) {
                    admitted.add(new Admitted(s, in, out, j));
                    return;
                }
            }
            closeQuietly(s); // the rendezvous is over
        } catch (IOException e) {
            handshaking.remove(s);
            closeQuietly(s);
            if (!done) {
                refused.incrementAndGet();
                handshakeWarnings.add("rank 0 of job " + env.jobId() + " refused a connection from "
                        + from + ": " + (e instanceof Handshake.AuthenticationException ? e.getMessage() : Hub.describe(e)));
            }
        }
    }

    private Admitted[] admitAll() {
        int size = env.size();
        Admitted[] members = new Admitted[size];
        int joined = 0;
        long deadline = System.nanoTime() + env.timeout().toNanos();
        try {
            while (joined < size - 1) {
                long remaining = deadline - System.nanoTime();
                Admitted a = remaining <= 0 ? null : admitted.poll(remaining, TimeUnit.NANOSECONDS);
                if (a == null) {
                    throw fail(members, "timed out after " + env.timeout().toMillis() + " ms waiting for rank(s) "
                            + missing(members) + " to join at " + env.rendezvous()
                            + refusals(), null);
                }
                String problem = check(a.joiner(), members);
                if (problem != null) {
                    throw fail(members, problem, a);
                }
                Handshake.verdict(a.out(), null);
                members[a.joiner().rank()] = a;
                joined++;
            }
            return members;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw fail(members, "interrupted while waiting for ranks to join", null);
        } catch (IOException e) {
            throw fail(members, "a rank's connection broke while it joined: " + Hub.describe(e), null);
        }
    }

    /** What was refused, for the timeout's message. */
    private String refusals() {
        List<String> what = new ArrayList<>();
        if (refused.get() > 0) {
            what.add("refused " + refused.get() + " connection(s) that did not prove the job's secret");
        }
        if (overCap.get() > 0) {
            what.add("closed " + overCap.get() + " connection(s) at once while " + maxPending
                    + " were authenticating (the cap on pending handshakes)");
        }
        return what.isEmpty() ? "" : " (" + String.join("; ", what) + ")";
    }

    private String check(Handshake.Joiner j, Admitted[] members) {
        if (j.size() != env.size()) {
            return "rank " + j.rank() + " says the job has " + j.size() + " ranks, rank 0 says " + env.size();
        }
        if (!j.jobId().equals(env.jobId())) {
            return "rank " + j.rank() + " says the job id is '" + j.jobId() + "', rank 0 says '" + env.jobId() + "'";
        }
        if (j.rank() <= 0 || j.rank() >= env.size()) {
            return "a process joined as rank " + j.rank() + ", outside [1, " + env.size() + ")";
        }
        if (members[j.rank()] != null) {
            return "two processes joined as rank " + j.rank();
        }
        return null;
    }

    private BootstrapException fail(Admitted[] members, String problem, Admitted offender) {
        String reason = "rank 0 of job " + env.jobId() + ": the rendezvous failed: " + problem;
        if (offender != null) {
            try {
                Handshake.verdict(offender.out(), reason);
            } catch (IOException e) {
                // it learns from the closed connection
            }
            offender.closeQuietly();
        }
        for (Admitted m : members) {
            if (m != null) {
                try {
                    Frames.writeAbort(m.out(), reason);
                } catch (IOException e) {
                    // it learns from the closed connection
                }
                m.closeQuietly();
            }
        }
        return new BootstrapException(reason);
    }

    private static List<Integer> missing(Admitted[] members) {
        List<Integer> m = new ArrayList<>();
        for (int r = 1; r < members.length; r++) {
            if (members[r] == null) {
                m.add(r);
            }
        }
        return m;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    /**
     * A socket's input with one deadline for the whole handshake: each read waits at most for the time left, so
     * a client that sends a byte now and then cannot hold its slot past the handshake timeout. Disarmed once the
     * handshake is over; then reads pass straight through.
     */
    private static final class DeadlineInput extends FilterInputStream {
        private final Socket socket;
        private volatile long deadline;
        private volatile boolean armed = true;

        DeadlineInput(Socket socket, long deadline) throws IOException {
            super(socket.getInputStream());
            this.socket = socket;
            this.deadline = deadline;
        }

        void disarm() {
            armed = false;
        }

        private void beforeRead() throws IOException {
            if (!armed) {
                return;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new SocketTimeoutException("the handshake took longer than its timeout");
            }
            socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left))));
        }

        @Override
        public int read() throws IOException {
            beforeRead();
            return super.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            beforeRead();
            return super.read(b, off, len);
        }
    }

    /**
     * Warnings of one kind, rate-limited: in each {@link #WARNING_INTERVAL}, the first {@code burst} are logged as
     * they come and the rest are only counted; the count is logged with the next warning after the interval, or
     * when the rendezvous ends.
     */
    private static final class Warnings {
        private final int burst;
        private final java.util.function.IntFunction<String> summary;
        private long windowStart = System.nanoTime() - WARNING_INTERVAL.toNanos();
        private int loggedInWindow;
        private int suppressed;

        Warnings(int burst, java.util.function.IntFunction<String> summary) {
            this.burst = burst;
            this.summary = summary;
        }

        /** Counts one event, logging its message if the window allows. */
        synchronized void add(String message) {
            long now = System.nanoTime();
            if (now - windowStart >= WARNING_INTERVAL.toNanos()) {
                flush();
                windowStart = now;
                loggedInWindow = 0;
            }
            if (loggedInWindow < burst) {
                loggedInWindow++;
                LOG.log(System.Logger.Level.WARNING, message);
            } else {
                suppressed++;
            }
        }

        /** Logs the count of events not logged yet, if any. */
        synchronized void flush() {
            if (suppressed > 0) {
                LOG.log(System.Logger.Level.WARNING, summary.apply(suppressed));
                suppressed = 0;
            }
        }
    }
}

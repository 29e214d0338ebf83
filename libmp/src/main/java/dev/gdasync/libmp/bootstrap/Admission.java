package dev.gdasync.libmp.bootstrap;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Rank 0's rendezvous: listens at the rendezvous address, authenticates every connection on a thread
 * of its own (so a silent or hostile client delays nobody), and admits ranks 1 to size-1 exactly once
 * each. Connections that fail the handshake are closed and logged, and the wait for the real ranks goes
 * on; a duplicate rank, or a rank that disagrees on the size or the job id, fails the job.
 *
 * <p>It listens on the given loopback address when the rendezvous host is a loopback address (a job on
 * one host, as {@code scripts/mprun} starts), else on every interface of the port, so that a host name
 * that resolves to a loopback address on rank 0's own host (as Debian's {@code /etc/hosts} does) still
 * works for ranks on other hosts. The listening socket is closed once every rank joined.
 */
final class Admission {
    /** How long one connection may take to authenticate. */
    static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    private static final System.Logger LOG = System.getLogger(Admission.class.getPackageName());

    private final JobEnvironment env;
    private final byte[] secret;
    private final ServerSocket server;
    private final LinkedBlockingQueue<Admitted> admitted = new LinkedBlockingQueue<>();
    private final Set<Socket> handshaking = ConcurrentHashMap.newKeySet();
    private final AtomicInteger refused = new AtomicInteger();
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

    private Admission(JobEnvironment env, ServerSocket server) {
        this.env = env;
        this.secret = env.secret();
        this.server = server;
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
        Admission a = new Admission(env, listen(env));
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
            handshaking.add(s);
            Thread.ofPlatform().daemon().name("gdasync-bootstrap-handshake").start(() -> authenticate(s));
        }
    }

    private void authenticate(Socket s) {
        String from = String.valueOf(s.getRemoteSocketAddress());
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout((int) HANDSHAKE_TIMEOUT.toMillis());
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            Handshake.Joiner j = Handshake.admit(in, out, secret);
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
                LOG.log(System.Logger.Level.WARNING, "rank 0 of job " + env.jobId() + " refused a connection from "
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
                            + (refused.get() > 0 ? " (refused " + refused.get()
                            + " connection(s) that did not prove the job's secret)" : ""), null);
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
}

package dev.gdasync.libmp.bootstrap;

import dev.gdasync.libmp.bootstrap.Frames.Collective;
import dev.gdasync.libmp.bootstrap.Frames.Result;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The end of a rank other than 0: one connection to rank 0, read by a thread of its own, so that rank 0's ABORT
 * (the job failed) or the end of rank 0's process is noticed at once, whether or not a collective is running.
 * Joining retries until the timeout (rank 0 may start later, or another process may hold the port for a while);
 * a collective sends this rank's contribution and waits for the result.
 */
final class MemberLink implements Hub {
    private final JobEnvironment env;
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final String me;
    /** Results in order, or {@link #FAILED} once the job failed or rank 0 left. */
    private final LinkedBlockingQueue<Object> arrivals = new LinkedBlockingQueue<>();
    private final JobFailure failure = new JobFailure();
    private volatile String rootLeft;
    private volatile boolean closed;

    private static final Object FAILED = new Object();

    private MemberLink(JobEnvironment env, Socket socket, DataInputStream in, DataOutputStream out) {
        this.env = env;
        this.socket = socket;
        this.in = in;
        this.out = out;
        this.me = "rank " + env.rank() + " of job " + env.jobId();
        Thread.ofPlatform().daemon().name("gdasync-bootstrap-root").start(this::read);
    }

    /**
     * Connects to rank 0 and joins the job, retrying until the timeout.
     *
     * @throws BootstrapException on timeout, or if rank 0 refuses this rank
     */
    static MemberLink join(JobEnvironment env) {
        String me = "rank " + env.rank() + " of job " + env.jobId();
        long deadline = System.nanoTime() + env.timeout().toNanos();
        String lastProblem = "nothing answered";
        long backoffMs = 10;
        byte[] secret = env.secret();
        while (true) {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (remainingMs <= 0) {
                throw new BootstrapException(me + ": could not join rank 0 at " + env.rendezvous() + " within "
                        + env.timeout().toMillis() + " ms: " + lastProblem);
            }
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(env.host(), env.port()), (int) Math.min(remainingMs, 5_000));
                s.setTcpNoDelay(true);
                s.setSoTimeout((int) Math.min(remainingMs, Admission.HANDSHAKE_TIMEOUT.toMillis()));
                DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
                Handshake.join(in, out, secret, env.rank(), env.size(), env.jobId());
                s.setSoTimeout(0);
                return new MemberLink(env, s, in, out);
            } catch (Handshake.RejectedException e) {
                closeQuietly(s);
                throw new BootstrapException(me + ": rank 0 at " + env.rendezvous() + " refused this rank: " + e.getMessage());
            } catch (Handshake.AuthenticationException e) {
                lastProblem = e.getMessage();
            } catch (UnknownHostException e) {
                lastProblem = "unknown host " + env.host();
            } catch (IOException e) {
                lastProblem = Hub.describe(e) + (s.isConnected()
                        ? " during the handshake (does this rank have the job's secret?)" : "");
            }
            closeQuietly(s);
            sleep(Math.min(backoffMs, remainingMs));
            backoffMs = Math.min(backoffMs * 2, 250);
        }
    }

    /** The reader thread: results to the waiting collective; ABORT or the end of rank 0 fail the job at once. */
    private void read() {
        try {
            while (true) {
                byte type = in.readByte();
                switch (type) {
                    case Frames.RESULT -> arrivals.add(Frames.readResultBody(in, env.size()));
                    case Frames.ABORT -> failJob(Frames.readReason(in));
                    case Frames.GOODBYE -> {
                        rootLeft = "rank 0 left the job (it closed its bootstrap)";
                        arrivals.add(FAILED);
                    }
                    default -> throw new IOException("protocol error: frame type " + type + " from rank 0");
                }
            }
        } catch (IOException e) {
            if (!closed && rootLeft == null) {
                failJob("rank 0's process is gone (this rank's bootstrap connection to it: " + Hub.describe(e) + ")");
            }
            arrivals.add(FAILED);
        }
    }

    @Override
    public List<byte[]> collective(long seq, Collective c, byte[] mine) {
        String what = c + " #" + seq;
        String failed = failure.reason();
        if (failed != null) {
            throw new BootstrapException(me + ": " + what + " failed: " + failed);
        }
        if (closed) {
            throw new BootstrapException(me + ": " + what + " on a closed bootstrap");
        }
        if (rootLeft != null) {
            throw new BootstrapException(me + ": " + what + ": " + rootLeft);
        }
        long patience = patienceMillis(env);
        try {
            synchronized (out) {
                Frames.writeContribution(out, seq, c, mine);
            }
            Object got = arrivals.poll(patience, TimeUnit.MILLISECONDS);
            if (got == null) {
                throw fail(what + " timed out after " + patience + " ms waiting for rank 0 (which enforces the "
                        + env.timeout().toMillis() + " ms timeout of every collective)");
            }
            if (got == FAILED) {
                arrivals.add(FAILED); // for whoever asks next
                String why = failure.reason();
                if (why != null) {
                    throw new BootstrapException(me + ": " + what + " failed: " + why);
                }
                throw new BootstrapException(me + ": " + what + ": " + (rootLeft != null ? rootLeft : "the bootstrap was closed"));
            }
            Result r = (Result) got;
            if (r.seq() != seq) {
                throw fail("protocol error: the result of collective #" + r.seq() + " where #" + seq + " was expected");
            }
            return r.parts();
        } catch (IOException e) {
            throw fail(closed ? what + ": the bootstrap was closed" : "rank 0 is gone (" + Hub.describe(e) + ") during " + what);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw fail(what + " was interrupted");
        }
    }

    /**
     * How long a member waits for rank 0's answer: the timeout plus a margin (as much again, at most
     * 5 s), so that when a rank is missing, rank 0's abort naming it arrives before this safety net
     * (for a rank 0 that hangs) fires.
     */
    static long patienceMillis(JobEnvironment env) {
        long t = env.timeout().toMillis();
        return Math.min(Integer.MAX_VALUE, t + Math.min(t, 5_000));
    }

    private BootstrapException fail(String reason) {
        failJob(reason);
        return new BootstrapException(me + ": " + reason);
    }

    /** Fails the job here once: the listeners run, a waiting collective wakes, the connection closes. */
    private void failJob(String reason) {
        if (failure.fail(reason)) {
            arrivals.add(FAILED);
            closeQuietly(socket);
        }
    }

    @Override
    public String failure() {
        return failure.reason();
    }

    @Override
    public void onFailure(Consumer<String> listener) {
        failure.listen(listener);
    }

    /** Asks rank 0 to fail the job with the reason (it tells every rank), and fails it here at once. */
    @Override
    public void abort(String reason) {
        if (!closed && failure.reason() == null) {
            try {
                synchronized (out) {
                    Frames.writeAbortJob(out, reason);
                }
            } catch (IOException e) {
                // rank 0 is gone: it cannot tell the others, their connections to it end too
            }
        }
        failJob(reason);
    }

    /** Says goodbye to rank 0 (this rank leaves: not a failure), then closes the connection. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (failure.reason() == null) {
            try {
                synchronized (out) {
                    Frames.writeGoodbye(out);
                }
            } catch (IOException e) {
                // gone already
            }
        }
        closeQuietly(socket);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BootstrapException("interrupted while joining the job's rendezvous", e);
        }
    }
}

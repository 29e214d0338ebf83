package dev.gdasync.libmp.bootstrap;

import dev.gdasync.libmp.bootstrap.Frames.Collective;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The end of a rank other than 0: one connection to rank 0. Joining retries until the timeout (rank 0
 * may start later, or another process may hold the port for a while); a collective sends this rank's
 * contribution and waits for the result, or for rank 0's ABORT naming what went wrong.
 */
final class MemberLink implements Hub {
    private final JobEnvironment env;
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private volatile String failure;
    private volatile boolean closed;

    private MemberLink(JobEnvironment env, Socket socket, DataInputStream in, DataOutputStream out) {
        this.env = env;
        this.socket = socket;
        this.in = in;
        this.out = out;
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

    @Override
    public List<byte[]> collective(long seq, Collective c, byte[] mine) {
        String me = "rank " + env.rank() + " of job " + env.jobId();
        String what = c + " #" + seq;
        if (failure != null) {
            throw new BootstrapException(me + ": " + what + " on a bootstrap that failed: " + failure);
        }
        if (closed) {
            throw new BootstrapException(me + ": " + what + " on a closed bootstrap");
        }
        long patience = patienceMillis(env);
        try {
            Frames.writeContribution(out, seq, c, mine);
            socket.setSoTimeout((int) patience);
            return Frames.readResult(in, seq, env.size());
        } catch (SocketTimeoutException e) {
            throw fail(me, what + " timed out after " + patience + " ms waiting for rank 0 (which enforces the "
                    + env.timeout().toMillis() + " ms timeout of every collective)");
        } catch (Frames.AbortedException e) {
            throw fail(me, what + " failed: " + e.getMessage());
        } catch (IOException e) {
            throw fail(me, closed ? what + ": the bootstrap was closed"
                    : "rank 0 is gone (" + Hub.describe(e) + ") during " + what);
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

    private BootstrapException fail(String me, String reason) {
        failure = reason;
        closeQuietly(socket);
        return new BootstrapException(me + ": " + reason);
    }

    @Override
    public void close() {
        closed = true;
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

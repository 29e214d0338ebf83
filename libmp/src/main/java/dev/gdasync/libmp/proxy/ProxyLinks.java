package dev.gdasync.libmp.proxy;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.libmp.bootstrap.Bootstrap;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The collective proxies' channel to each other, one per job that spans several hosts: a queue pair of the proxy's
 * NIC to every other host's proxy (over the NIC's network transport between hosts, UCX), connected with endpoints
 * exchanged through the proxies' own bootstrap, carrying small control frames as two-sided SENDs. Each peer has
 * {@link #FRAMES} posted receives, reposted as they are read, and {@link #FRAMES} send buffers; a frame for which no
 * buffer is free waits in a backlog and goes out in order when one completes. One thread uses it (the proxy's).
 */
final class ProxyLinks implements AutoCloseable {
    /** Largest frame. */
    static final int FRAME = 2048;
    /** Receives posted and send buffers per peer proxy. */
    static final int FRAMES = 64;

    /** Receives one frame from a peer. */
    interface Handler {
        /**
         * @param host  the sending proxy's host
         * @param frame the frame's bytes (valid during the call)
         */
        void frame(int host, ByteBuffer frame);

        /**
         * @param host the proxy whose link failed
         * @param why  the NIC's detail
         */
        void broken(int host, String why);
    }

    private final Nic nic;
    private final int host;
    private final int hosts;
    private final QueuePair[] qps;
    private final Region recvRegion;
    private final MemoryRegion recvMr;
    private final Region sendRegion;
    private final MemoryRegion sendMr;
    private final List<ArrayDeque<Integer>> freeSends = new ArrayList<>();
    private final List<ArrayDeque<byte[]>> backlog = new ArrayList<>();
    private final boolean[] broken;
    private final long[] heard;
    /** Why posting to a peer failed, reported to the handler by the next {@link #poll}. */
    private final String[] postFailure;
    private final Completion completion = new Completion();

    /**
     * Connects this proxy to every other: one queue pair per peer, endpoints exchanged with one all-gather of the
     * proxies' bootstrap (rank = host), receives posted, then a barrier so no frame reaches a peer without receives.
     *
     * @param nic  the proxy's NIC
     * @param boot the proxies' bootstrap: one member per host, rank = host
     */
    ProxyLinks(Nic nic, Bootstrap boot) {
        this.nic = nic;
        this.host = boot.rank();
        this.hosts = boot.size();
        this.qps = new QueuePair[hosts];
        this.broken = new boolean[hosts];
        this.heard = new long[hosts];
        this.postFailure = new String[hosts];
        this.recvRegion = nic.allocateHost((long) hosts * FRAMES * FRAME);
        this.recvMr = nic.register(recvRegion, Access.ALL);
        this.sendRegion = nic.allocateHost((long) hosts * FRAMES * FRAME);
        this.sendMr = nic.register(sendRegion, Access.ALL);
        for (int g = 0; g < hosts; g++) {
            freeSends.add(new ArrayDeque<>());
            backlog.add(new ArrayDeque<>());
            if (g != host) {
                qps[g] = nic.createQueuePair(QueuePairConfig.DEFAULT);
                for (int i = 0; i < FRAMES; i++) {
                    freeSends.get(g).add(i);
                }
            }
        }
        // Each proxy publishes, per host, the endpoint of its queue pair for that host's proxy.
        List<byte[]> all = boot.allGather(endpoints());
        for (int g = 0; g < hosts; g++) {
            if (g != host) {
                qps[g].connect(Endpoint.of(endpointFor(all.get(g), host)));
                for (int i = 0; i < FRAMES; i++) {
                    postRecv(g, i);
                }
            }
        }
        boot.barrier();
        java.util.Arrays.fill(heard, System.nanoTime());
    }

    private byte[] endpoints() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(b)) {
            for (int g = 0; g < hosts; g++) {
                byte[] ep = g == host ? new byte[0] : qps[g].endpoint().toBytes();
                out.writeInt(ep.length);
                out.write(ep);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toByteArray();
    }

    private static byte[] endpointFor(byte[] table, int host) {
        ByteBuffer b = ByteBuffer.wrap(table);
        for (int g = 0; ; g++) {
            byte[] ep = new byte[b.getInt()];
            b.get(ep);
            if (g == host) {
                return ep;
            }
        }
    }

    private long frameOffset(int g, int i) {
        return ((long) g * FRAMES + i) * FRAME;
    }

    private void postRecv(int g, int i) {
        qps[g].postRecv(new RecvWorkRequest().wrId(i).sge(recvMr, frameOffset(g, i), FRAME));
    }

    /** @return the hosts of the job */
    int hosts() {
        return hosts;
    }

    /** @return this proxy's host */
    int host() {
        return host;
    }

    /**
     * Sends a frame to another host's proxy (now, or from the backlog once a send buffer is free).
     *
     * @param g     the host
     * @param frame at most {@link #FRAME} bytes
     */
    void send(int g, byte[] frame) {
        if (frame.length > FRAME) {
            throw new IllegalArgumentException("a proxy frame of " + frame.length + " bytes exceeds " + FRAME);
        }
        if (broken[g]) {
            return;
        }
        ArrayDeque<byte[]> waiting = backlog.get(g);
        if (!waiting.isEmpty() || freeSends.get(g).isEmpty()) {
            waiting.add(frame);
            return;
        }
        post(g, freeSends.get(g).poll(), frame);
    }

    private void post(int g, int i, byte[] frame) {
        long off = frameOffset(g, i);
        MemorySegment.copy(frame, 0, sendRegion.segment(), ValueLayout.JAVA_BYTE, off, frame.length);
        try {
            qps[g].postSend(new SendWorkRequest().opcode(Opcode.SEND).flags(SendFlags.SIGNALED).wrId(i)
                    .sge(sendMr, off, frame.length));
        } catch (RuntimeException e) {
            // A queue pair in error refuses new work: the link is broken (told to the handler by poll).
            broken[g] = true;
            backlog.get(g).clear();
            postFailure[g] = "sending to the proxy of host " + g + " failed: " + e.getMessage();
        }
    }

    /**
     * Reads the frames that arrived and reaps finished sends.
     *
     * @param handler receives each frame, and each link that failed
     * @return frames read and sends reaped
     */
    int poll(Handler handler) {
        int work = 0;
        for (int g = 0; g < hosts; g++) {
            QueuePair qp = qps[g];
            if (postFailure[g] != null) {
                String why = postFailure[g];
                postFailure[g] = null;
                handler.broken(g, why);
            }
            if (qp == null || broken[g]) {
                continue;
            }
            while (!broken[g] && qp.recvCq().poll(completion) == 1) {
                work++;
                if (!completion.isSuccess()) {
                    fail(g, handler, "receiving from the proxy of host " + g + " failed: " + completion.detail());
                    break;
                }
                int i = (int) completion.wrId();
                byte[] frame = recvRegion.segment().asSlice(frameOffset(g, i), completion.byteLength())
                        .toArray(ValueLayout.JAVA_BYTE);
                postRecv(g, i);
                heard[g] = System.nanoTime();
                handler.frame(g, ByteBuffer.wrap(frame));
            }
            while (!broken[g] && qp.sendCq().poll(completion) == 1) {
                work++;
                if (!completion.isSuccess()) {
                    fail(g, handler, "sending to the proxy of host " + g + " failed: " + completion.detail());
                    break;
                }
                int i = (int) completion.wrId();
                byte[] next = backlog.get(g).poll();
                if (next != null) {
                    post(g, i, next);
                } else {
                    freeSends.get(g).add(i);
                }
            }
        }
        return work;
    }

    /**
     * Declares the links to the proxies that sent nothing (not even their heartbeat) for too long broken.
     *
     * @param now     {@link System#nanoTime()}
     * @param silence how long a live proxy may stay silent
     * @param handler told of each link declared broken
     */
    void checkSilence(long now, long silence, Handler handler) {
        for (int g = 0; g < hosts; g++) {
            if (g != host && !broken[g] && now - heard[g] > silence) {
                fail(g, handler, "the proxy of host " + g + " sent nothing for " + silence / 1_000_000_000L + " s");
            }
        }
    }

    private void fail(int g, Handler handler, String why) {
        broken[g] = true;
        backlog.get(g).clear();
        handler.broken(g, why);
    }

    @Override
    public void close() {
        for (QueuePair qp : qps) {
            if (qp != null) {
                qp.close();
            }
        }
        nic.deregister(recvMr);
        nic.deregister(sendMr);
    }
}

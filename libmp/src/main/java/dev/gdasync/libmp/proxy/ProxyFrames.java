package dev.gdasync.libmp.proxy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The frames the collective proxies of a job send each other over {@link ProxyLinks}, little-endian, each starting
 * with its type:
 * <pre>
 * LINK       rank, the rank's endpoint for the receiving proxy              (connect a rank of mine to you)
 * LINKED     rank, host, ok, the proxy's endpoint for the rank or why not   (the answer)
 * RECV       context, seq, src, dst, part, address, length, key, token      (dst posted a receive from src, on your host)
 * RECV_DONE  token, failed, why                                            (the transfer into that receive ended)
 * RANK_GONE  rank, why                                                     (a rank of mine died or closed)
 * BEAT       (nothing)                                                     (once a second: a send to a dead proxy fails)
 * </pre>
 */
final class ProxyFrames {
    static final int LINK = 1;
    static final int LINKED = 2;
    static final int RECV = 3;
    static final int RECV_DONE = 4;
    static final int RANK_GONE = 5;
    static final int BEAT = 6;
    /** Longest text a frame carries (the rest of a longer message is cut). */
    private static final int MAX_TEXT = 1200;

    private ProxyFrames() {
    }

    private static ByteBuffer frame(int type) {
        ByteBuffer b = ByteBuffer.allocate(ProxyLinks.FRAME).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(type);
        return b;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }

    private static void putBytes(ByteBuffer b, byte[] v) {
        b.putInt(v.length).put(v);
    }

    private static void putText(ByteBuffer b, String text) {
        byte[] t = text.getBytes(StandardCharsets.UTF_8);
        putBytes(b, t.length <= MAX_TEXT ? t : java.util.Arrays.copyOf(t, MAX_TEXT));
    }

    static byte[] getBytes(ByteBuffer b) {
        byte[] v = new byte[b.getInt()];
        b.get(v);
        return v;
    }

    static String getText(ByteBuffer b) {
        return new String(getBytes(b), StandardCharsets.UTF_8);
    }

    /** @return the frame's type; the buffer is then positioned at its fields */
    static int type(ByteBuffer b) {
        return b.order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    static byte[] link(int rank, byte[] endpoint) {
        ByteBuffer b = frame(LINK).putInt(rank);
        putBytes(b, endpoint);
        return bytes(b);
    }

    static byte[] linked(int rank, int host, byte[] endpoint) {
        ByteBuffer b = frame(LINKED).putInt(rank).putInt(host).putInt(1);
        putBytes(b, endpoint);
        return bytes(b);
    }

    static byte[] linkRefused(int rank, int host, String why) {
        ByteBuffer b = frame(LINKED).putInt(rank).putInt(host).putInt(0);
        putText(b, why);
        return bytes(b);
    }

    static byte[] recv(int context, int seq, int src, int dst, int part, long address, long length, long key, long token,
                       String name) {
        ByteBuffer b = frame(RECV).putInt(context).putInt(seq).putInt(src).putInt(dst).putInt(part)
                .putLong(address).putLong(length).putLong(key).putLong(token);
        putText(b, name);
        return bytes(b);
    }

    static byte[] recvDone(long token, String failure) {
        ByteBuffer b = frame(RECV_DONE).putLong(token).putInt(failure == null ? 0 : 1);
        putText(b, failure == null ? "" : failure);
        return bytes(b);
    }

    static byte[] beat() {
        return bytes(frame(BEAT));
    }

    static byte[] rankGone(int rank, String why) {
        ByteBuffer b = frame(RANK_GONE).putInt(rank);
        putText(b, why);
        return bytes(b);
    }
}

package dev.gdasync.libmp.bootstrap;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The frames exchanged after the handshake, all length-prefixed, big-endian.
 *
 * <pre>
 * CONTRIBUTE  member -> root : type 1, seq (long), collective (byte), length (int), bytes
 * RESULT      root -> member : type 2, seq (long), count (int), count x (length (int), bytes)
 * ABORT       root -> member : type 3, reason (UTF): the job failed
 * GOODBYE     either way     : type 4: the sender leaves the job (closes its bootstrap); its connection ends next
 * ABORT_JOB   member -> root : type 5, reason (UTF): the member aborts the job
 * </pre>
 *
 * <p>A connection that ends without a GOODBYE means the process at its other end is gone: its peer fails the
 * job at once.
 */
final class Frames {
    static final byte CONTRIBUTE = 1;
    static final byte RESULT = 2;
    static final byte ABORT = 3;
    static final byte GOODBYE = 4;
    static final byte ABORT_JOB = 5;
    /** The largest contribution of one rank to one collective. */
    static final int MAX_PART = 64 << 20;

    private Frames() {
    }

    /** The collectives, as named in messages. */
    enum Collective {
        ALL_GATHER("allGather"), BARRIER("barrier");

        private final String label;

        Collective(String label) {
            this.label = label;
        }

        @Override
        public String toString() {
            return label;
        }
    }

    /** A member's contribution to collective {@code seq}. */
    record Contribution(long seq, Collective collective, byte[] data) {
    }

    static void writeContribution(DataOutputStream out, long seq, Collective c, byte[] data) throws IOException {
        out.writeByte(CONTRIBUTE);
        out.writeLong(seq);
        out.writeByte(c.ordinal());
        out.writeInt(data.length);
        out.write(data);
        out.flush();
    }

    /**
     * Reads the rest of a CONTRIBUTE frame whose type byte was read.
     *
     * @throws IOException if the connection fails or the frame is malformed
     */
    static Contribution readContributionBody(DataInputStream in) throws IOException {
        long seq = in.readLong();
        int c = in.readByte();
        if (c < 0 || c >= Collective.values().length) {
            throw new IOException("protocol error: unknown collective " + c);
        }
        return new Contribution(seq, Collective.values()[c], readPart(in));
    }

    static void writeResult(DataOutputStream out, long seq, List<byte[]> parts) throws IOException {
        out.writeByte(RESULT);
        out.writeLong(seq);
        out.writeInt(parts.size());
        for (byte[] p : parts) {
            out.writeInt(p.length);
            out.write(p);
        }
        out.flush();
    }

    static void writeAbort(DataOutputStream out, String reason) throws IOException {
        writeReason(out, ABORT, reason);
    }

    static void writeAbortJob(DataOutputStream out, String reason) throws IOException {
        writeReason(out, ABORT_JOB, reason);
    }

    static void writeGoodbye(DataOutputStream out) throws IOException {
        out.writeByte(GOODBYE);
        out.flush();
    }

    private static void writeReason(DataOutputStream out, byte type, String reason) throws IOException {
        out.writeByte(type);
        out.writeUTF(reason.length() > 2000 ? reason.substring(0, 2000) : reason);
        out.flush();
    }

    /** Reads the reason of an ABORT or ABORT_JOB frame whose type byte was read. */
    static String readReason(DataInputStream in) throws IOException {
        return in.readUTF();
    }

    /** The root's answer to collective {@code seq}: every rank's contribution. */
    record Result(long seq, List<byte[]> parts) {
    }

    /**
     * Reads the rest of a RESULT frame whose type byte was read.
     *
     * @param size the number of ranks
     * @throws IOException if the connection fails or the frame is malformed
     */
    static Result readResultBody(DataInputStream in, int size) throws IOException {
        long s = in.readLong();
        int n = in.readInt();
        if (n != size) {
            throw new IOException("protocol error: result of collective #" + s + " with " + n + " parts in a job of " + size);
        }
        List<byte[]> parts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            parts.add(readPart(in));
        }
        return new Result(s, parts);
    }

    private static byte[] readPart(DataInputStream in) throws IOException {
        int len = in.readInt();
        if (len < 0 || len > MAX_PART) {
            throw new IOException("protocol error: a part of " + len + " bytes (at most " + MAX_PART + ")");
        }
        byte[] b = new byte[len];
        in.readFully(b);
        return b;
    }
}

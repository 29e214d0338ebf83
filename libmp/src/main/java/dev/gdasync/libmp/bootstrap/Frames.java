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
 * ABORT       root -> member : type 3, reason (UTF)
 * </pre>
 */
final class Frames {
    static final byte CONTRIBUTE = 1;
    static final byte RESULT = 2;
    static final byte ABORT = 3;
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

    static Contribution readContribution(DataInputStream in) throws IOException {
        byte type = in.readByte();
        if (type != CONTRIBUTE) {
            throw new IOException("protocol error: frame type " + type + " where a contribution was expected");
        }
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
        out.writeByte(ABORT);
        out.writeUTF(reason.length() > 2000 ? reason.substring(0, 2000) : reason);
        out.flush();
    }

    /**
     * Reads the root's answer to collective {@code seq}.
     *
     * @return every rank's contribution
     * @throws AbortedException if the root aborted the job
     */
    static List<byte[]> readResult(DataInputStream in, long seq, int size) throws IOException {
        byte type = in.readByte();
        if (type == ABORT) {
            throw new AbortedException(in.readUTF());
        }
        if (type != RESULT) {
            throw new IOException("protocol error: frame type " + type + " where a result was expected");
        }
        long s = in.readLong();
        int n = in.readInt();
        if (s != seq || n != size) {
            throw new IOException("protocol error: result of collective #" + s + " with " + n
                    + " parts where #" + seq + " with " + size + " was expected");
        }
        List<byte[]> parts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            parts.add(readPart(in));
        }
        return parts;
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

    /** The root aborted the job; the message says why. */
    static final class AbortedException extends IOException {
        private static final long serialVersionUID = 1L;

        AbortedException(String reason) {
            super(reason);
        }
    }
}

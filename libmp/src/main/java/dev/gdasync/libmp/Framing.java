package dev.gdasync.libmp;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** Packs a list of byte arrays into one (u32 count, then u32 length + bytes each) and back. */
final class Framing {
    private Framing() {
    }

    static byte[] join(List<byte[]> parts) {
        int total = 4;
        for (byte[] p : parts) {
            total += 4 + p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN).putInt(parts.size());
        for (byte[] p : parts) {
            b.putInt(p.length).put(p);
        }
        return b.array();
    }

    static List<byte[]> split(byte[] joined) {
        ByteBuffer b = ByteBuffer.wrap(joined).order(ByteOrder.LITTLE_ENDIAN);
        try {
            int n = b.getInt();
            if (n < 0 || n > joined.length) {
                throw new IllegalArgumentException("malformed frame list: count " + n);
            }
            List<byte[]> parts = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int len = b.getInt();
                if (len < 0 || len > b.remaining()) {
                    throw new IllegalArgumentException("malformed frame list: part " + i + " of " + len + " bytes");
                }
                byte[] p = new byte[len];
                b.get(p);
                parts.add(p);
            }
            return parts;
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("malformed frame list: truncated", e);
        }
    }
}

package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.nic.Endpoint;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * What a peer needs to connect an RC queue pair to one on a ConnectX port: the queue pair's number and first packet
 * sequence number, and the port's LID, GID, number and active MTU. Encoded as {@value #SIZE} big-endian bytes:
 *
 * <pre>
 * 0  magic "mlx5" (0x6d6c7835)   4  version (1)   5  port   6  MTU (IBV_MTU_*)   7  reserved (0)
 * 8  QP number (24 bits)        12  PSN (24 bits)          16  LID (16 bits)   18  reserved (0)
 * 20 GID, 16 bytes in network order (all zeros on InfiniBand: the peer routes by LID)
 * </pre>
 *
 * @param qpn  the queue pair's number, 24 bits
 * @param psn  the first packet sequence number its sends carry, 24 bits
 * @param lid  the port's LID (0 on RoCE)
 * @param gid  the GID the queue pair sends from, 16 bytes; all zeros when the peer should route by LID
 * @param port the port number, 1 to 255
 * @param mtu  the port's active MTU, an {@code IBV_MTU_*} value (1 to 5)
 */
public record VerbsEndpoint(int qpn, int psn, int lid, byte[] gid, int port, int mtu) {
    /** The encoding's first four bytes, "mlx5". */
    public static final int MAGIC = 0x6d6c7835;
    /** The encoding's version. */
    public static final byte VERSION = 1;
    /** The encoding's length. */
    public static final int SIZE = 36;

    /**
     * @throws IllegalArgumentException if a field is out of range
     */
    public VerbsEndpoint {
        Objects.requireNonNull(gid, "gid");
        if ((qpn & ~0xffffff) != 0) {
            throw new IllegalArgumentException("a QP number has 24 bits, got 0x" + Integer.toHexString(qpn));
        }
        if ((psn & ~0xffffff) != 0) {
            throw new IllegalArgumentException("a packet sequence number has 24 bits, got 0x" + Integer.toHexString(psn));
        }
        if ((lid & ~0xffff) != 0) {
            throw new IllegalArgumentException("a LID has 16 bits, got 0x" + Integer.toHexString(lid));
        }
        if (gid.length != 16) {
            throw new IllegalArgumentException("a GID has 16 bytes, got " + gid.length);
        }
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("a port number is 1 to 255, got " + port);
        }
        if (VerbsConstants.mtuBytes(mtu) < 0) {
            throw new IllegalArgumentException("an MTU is IBV_MTU_256 (1) to IBV_MTU_4096 (5), got " + mtu);
        }
        gid = gid.clone();
    }

    /** @return a copy of the GID */
    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** @return whether the GID is all zeros: the peer routes to this endpoint by LID */
    public boolean routesByLid() {
        for (byte b : gid) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** @return the encoding as an {@link Endpoint} */
    public Endpoint encode() {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        b.putInt(MAGIC).put(VERSION).put((byte) port).put((byte) mtu).put((byte) 0);
        b.putInt(qpn).putInt(psn).putShort((short) lid).putShort((short) 0).put(gid);
        return Endpoint.of(b.array());
    }

    /**
     * @param endpoint an encoded endpoint
     * @return the endpoint
     * @throws IllegalArgumentException if it is not a hardware mlx5 endpoint of this version, or a field is out of
     *                                  range
     */
    public static VerbsEndpoint decode(Endpoint endpoint) {
        Objects.requireNonNull(endpoint, "endpoint");
        byte[] bytes = endpoint.toBytes();
        if (bytes.length < 5 || ByteBuffer.wrap(bytes).getInt() != MAGIC) {
            throw new IllegalArgumentException("not a hardware mlx5 endpoint (it does not start with \"mlx5\"): "
                    + endpoint.toHex());
        }
        if (bytes[4] != VERSION) {
            throw new IllegalArgumentException("a hardware mlx5 endpoint of version " + bytes[4] + ", this build reads version "
                    + VERSION + ": the peers run different builds");
        }
        if (bytes.length != SIZE) {
            throw new IllegalArgumentException("a hardware mlx5 endpoint of version " + VERSION + " has " + SIZE
                    + " bytes, got " + bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes, 5, SIZE - 5);
        int port = b.get() & 0xff;
        int mtu = b.get() & 0xff;
        b.get();
        int qpn = b.getInt();
        int psn = b.getInt();
        int lid = b.getShort() & 0xffff;
        b.getShort();
        byte[] gid = new byte[16];
        b.get(gid);
        return new VerbsEndpoint(qpn, psn, lid, gid, port, mtu);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VerbsEndpoint e && qpn == e.qpn && psn == e.psn && lid == e.lid && port == e.port
                && mtu == e.mtu && Arrays.equals(gid, e.gid);
    }

    @Override
    public int hashCode() {
        return Objects.hash(qpn, psn, lid, port, mtu, Arrays.hashCode(gid));
    }

    @Override
    public String toString() {
        return "VerbsEndpoint{qpn=0x" + Integer.toHexString(qpn) + ", psn=0x" + Integer.toHexString(psn) + ", lid=" + lid
                + ", gid=" + HexFormat.of().formatHex(gid) + ", port=" + port + ", mtu=" + VerbsConstants.mtuBytes(mtu) + "}";
    }
}

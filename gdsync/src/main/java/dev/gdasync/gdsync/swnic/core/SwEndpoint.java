package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.nic.Endpoint;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The software NIC's endpoint descriptor: where the peer's files are, which queue pair to map, and how to reach
 * it over UCX.
 *
 * <p>Encoding (little-endian): magic "GDEP" u32, format version u16, transports u16 (bit 0 shm, bit 1 ucx),
 * pid u64, process start time u64 (epoch ms), queue pair number u32, token u64, send depth u32, receive
 * depth u32, send CQ depth u32, directory length u16, directory UTF-8 bytes, host identity length u16, host
 * identity UTF-8 bytes ({@link HostIdentity}), UCX worker address length u32, its bytes (empty without ucx).
 *
 * @param directory   the peer's process directory
 * @param pid         the peer's pid
 * @param startMillis the peer's start time
 * @param qpn         the queue pair number
 * @param token       a random number that identifies this queue pair across processes
 * @param sendDepth   its send queue depth
 * @param recvDepth   its receive queue depth
 * @param sendCqDepth its send completion queue depth
 * @param hostId      the peer's host identity
 * @param ucxAddress  the peer NIC's UCX worker address, empty when it offers no UCX
 */
public record SwEndpoint(Path directory, long pid, long startMillis, int qpn, long token, int sendDepth, int recvDepth,
                   int sendCqDepth, String hostId, byte[] ucxAddress) {
    /** The descriptor's magic number, "GDEP". */
    public static final int MAGIC = 0x50454447; // "GDEP"
    /** Transport bit: the peer can be reached over shared memory. */
    public static final int TRANSPORT_SHM = 1;
    /** Transport bit: the peer can be reached over UCX. */
    public static final int TRANSPORT_UCX = 2;

    /** @return whether the peer offers UCX */
    public boolean offersUcx() {
        return ucxAddress.length > 0;
    }

    /** @return the descriptor's bytes as a provider-neutral endpoint */
    public Endpoint encode() {
        byte[] dir = directory.toString().getBytes(StandardCharsets.UTF_8);
        byte[] host = hostId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + 2 + 2 + 8 + 8 + 4 + 8 + 4 * 3 + 2 + dir.length + 2 + host.length + 4
                + ucxAddress.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putShort((short) Layouts.VERSION).putShort((short) (TRANSPORT_SHM | (offersUcx() ? TRANSPORT_UCX : 0)))
                .putLong(pid).putLong(startMillis).putInt(qpn).putLong(token)
                .putInt(sendDepth).putInt(recvDepth).putInt(sendCqDepth)
                .putShort((short) dir.length).put(dir)
                .putShort((short) host.length).put(host)
                .putInt(ucxAddress.length).put(ucxAddress);
        return Endpoint.of(b.array());
    }

    /**
     * @param endpoint a peer's endpoint
     * @return the descriptor
     * @throws IllegalArgumentException if the bytes are not a software-NIC endpoint descriptor of this format
     */
    public static SwEndpoint decode(Endpoint endpoint) {
        ByteBuffer b = ByteBuffer.wrap(endpoint.toBytes()).order(ByteOrder.LITTLE_ENDIAN);
        try {
            if (b.getInt() != MAGIC) {
                throw new IllegalArgumentException("not a software-NIC endpoint descriptor (bad magic)");
            }
            int version = b.getShort() & 0xffff;
            if (version != Layouts.VERSION) {
                throw new IllegalArgumentException("endpoint speaks shared-memory format " + version
                        + ", this process speaks " + Layouts.VERSION);
            }
            int transports = b.getShort() & 0xffff;
            if ((transports & ~(TRANSPORT_SHM | TRANSPORT_UCX)) != 0) {
                throw new IllegalArgumentException("endpoint offers unknown transports 0x" + Integer.toHexString(transports));
            }
            long pid = b.getLong();
            long start = b.getLong();
            int qpn = b.getInt();
            long token = b.getLong();
            int sd = b.getInt();
            int rd = b.getInt();
            int cd = b.getInt();
            int len = b.getShort() & 0xffff;
            byte[] dir = new byte[len];
            b.get(dir);
            byte[] host = new byte[b.getShort() & 0xffff];
            b.get(host);
            int ucxLength = b.getInt();
            if (ucxLength < 0 || ucxLength > b.remaining()) {
                throw new IllegalArgumentException("endpoint descriptor is truncated");
            }
            byte[] ucx = new byte[ucxLength];
            b.get(ucx);
            if (b.hasRemaining()) {
                throw new IllegalArgumentException("endpoint descriptor has " + b.remaining() + " trailing bytes");
            }
            if ((transports & TRANSPORT_UCX) != 0 && ucxLength == 0) {
                throw new IllegalArgumentException("endpoint offers ucx without a worker address");
            }
            return new SwEndpoint(Path.of(new String(dir, StandardCharsets.UTF_8)), pid, start, qpn, token, sd, rd, cd,
                    new String(host, StandardCharsets.UTF_8), ucx);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("endpoint descriptor is truncated", e);
        }
    }
}

package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Endpoint;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The software NIC's endpoint descriptor: where the peer's files are and which queue pair to map.
 *
 * <p>Encoding (little-endian): magic "GDEP" u32, format version u16, transport u16 (1 = shm), pid u64,
 * process start time u64 (epoch ms), queue pair number u32, token u64, send depth u32, receive depth
 * u32, send CQ depth u32, directory length u16, directory UTF-8 bytes.
 *
 * @param directory   the peer's process directory
 * @param pid         the peer's pid
 * @param startMillis the peer's start time
 * @param qpn         the queue pair number
 * @param token       a random number that identifies this queue pair across processes
 * @param sendDepth   its send queue depth
 * @param recvDepth   its receive queue depth
 * @param sendCqDepth its send completion queue depth
 */
record ShmEndpoint(Path directory, long pid, long startMillis, int qpn, long token, int sendDepth, int recvDepth,
                   int sendCqDepth) {
    static final int MAGIC = 0x50454447; // "GDEP"
    static final int TRANSPORT_SHM = 1;

    Endpoint encode() {
        byte[] dir = directory.toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + 2 + 2 + 8 + 8 + 4 + 8 + 4 * 3 + 2 + dir.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putShort((short) Layouts.VERSION).putShort((short) TRANSPORT_SHM)
                .putLong(pid).putLong(startMillis).putInt(qpn).putLong(token)
                .putInt(sendDepth).putInt(recvDepth).putInt(sendCqDepth)
                .putShort((short) dir.length).put(dir);
        return Endpoint.of(b.array());
    }

    static ShmEndpoint decode(Endpoint endpoint) {
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
            int transport = b.getShort() & 0xffff;
            if (transport != TRANSPORT_SHM) {
                throw new IllegalArgumentException("endpoint uses transport " + transport + ", only shm (1) is available");
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
            if (b.hasRemaining()) {
                throw new IllegalArgumentException("endpoint descriptor has " + b.remaining() + " trailing bytes");
            }
            return new ShmEndpoint(Path.of(new String(dir, StandardCharsets.UTF_8)), pid, start, qpn, token, sd, rd, cd);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("endpoint descriptor is truncated", e);
        }
    }
}

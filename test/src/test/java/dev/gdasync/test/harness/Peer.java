package dev.gdasync.test.harness;

import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.SendFlags;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One process's side of a two-process exchange, driven by name: regions, memory regions and queue pairs
 * are named by the test. {@link LocalPeer} calls the gdsync API in this JVM; {@link RemotePeer} sends the
 * same operations as text commands to a child JVM running {@link ShmPeerMain}, which calls the same
 * {@link LocalPeer} there. A scenario written against this interface therefore runs in both directions.
 *
 * <p>Failures of the underlying call surface as {@link PeerException} in both implementations.
 */
public interface Peer extends AutoCloseable {

    /** Which of a queue pair's completion queues. */
    enum Cq { SEND, RECV }

    /** A buffer inside a named memory region. */
    record Sge(String mr, long offset, int length) {
        String encode() {
            return mr + ":" + Long.toHexString(offset) + ":" + Integer.toHexString(length);
        }

        static Sge decode(String s) {
            String[] f = s.split(":");
            if (f.length != 3) {
                throw new IllegalArgumentException("an sge is mr:offset:length, got " + s);
            }
            return new Sge(f[0], Wire.num(f[1]), (int) Wire.num(f[2]));
        }
    }

    /** What a registration looks like to the peer that uses it. */
    record MrInfo(long address, long length, long lkey, long rkey) {
        /** @return one past the last byte */
        public long end() {
            return address + length;
        }
    }

    /** A completion, as either process read it. */
    record Cqe(long wrId, CompletionStatus status, CompletionOpcode opcode, ErrorDetail detail, int byteLength,
               int immediate, boolean hasImmediate, int qpn) {
        static Cqe of(Completion c) {
            return new Cqe(c.wrId(), c.status(), c.opcode(), c.detail(), c.byteLength(), c.immediate(),
                    c.hasImmediate(), c.queuePairNumber());
        }

        /** @return whether the status is SUCCESS */
        public boolean isSuccess() {
            return status == CompletionStatus.SUCCESS;
        }

        String encode() {
            return Long.toHexString(wrId) + " " + status + " " + opcode + " " + detail + " "
                    + Integer.toHexString(byteLength) + " " + Integer.toHexString(immediate) + " " + hasImmediate + " "
                    + Integer.toHexString(qpn);
        }

        static Cqe decode(String[] f, int i) {
            return new Cqe(Wire.num(f[i]), CompletionStatus.valueOf(f[i + 1]), CompletionOpcode.valueOf(f[i + 2]),
                    ErrorDetail.valueOf(f[i + 3]), (int) Wire.num(f[i + 4]), (int) Wire.num(f[i + 5]),
                    Boolean.parseBoolean(f[i + 6]), (int) Wire.num(f[i + 7]));
        }
    }

    /** A queue pair's state and why it failed. */
    record QpStatus(QpState state, ErrorDetail detail) {
    }

    /** A send work request naming its buffers by memory region name. */
    final class Wr {
        private Opcode opcode;
        private long wrId;
        private int flags = SendFlags.SIGNALED;
        private int immediate;
        private long remoteAddress;
        private long rkey;
        private long compareAdd;
        private long swap;
        private final List<Sge> sges = new ArrayList<>();

        private Wr(Opcode opcode, long wrId) {
            this.opcode = opcode;
            this.wrId = wrId;
        }

        /**
         * @param opcode the operation
         * @param wrId   its id
         * @return a signaled request with no buffers
         */
        public static Wr of(Opcode opcode, long wrId) {
            return new Wr(opcode, wrId);
        }

        public Wr flags(int flags) {
            this.flags = flags;
            return this;
        }

        public Wr imm(int immediate) {
            this.immediate = immediate;
            return this;
        }

        public Wr remote(long address, long rkey) {
            this.remoteAddress = address;
            this.rkey = rkey;
            return this;
        }

        public Wr compareAdd(long v) {
            this.compareAdd = v;
            return this;
        }

        public Wr swap(long v) {
            this.swap = v;
            return this;
        }

        public Wr sge(String mr, long offset, int length) {
            sges.add(new Sge(mr, offset, length));
            return this;
        }

        public Opcode opcode() {
            return opcode;
        }

        public long wrId() {
            return wrId;
        }

        public int flags() {
            return flags;
        }

        public int immediate() {
            return immediate;
        }

        public long remoteAddress() {
            return remoteAddress;
        }

        public long rkey() {
            return rkey;
        }

        public long compareAdd() {
            return compareAdd;
        }

        public long swap() {
            return swap;
        }

        public List<Sge> sges() {
            return sges;
        }

        String encode() {
            StringBuilder b = new StringBuilder();
            b.append(opcode).append(' ').append(Long.toHexString(wrId)).append(' ').append(Integer.toHexString(flags))
                    .append(' ').append(Integer.toHexString(immediate)).append(' ').append(Long.toHexString(remoteAddress))
                    .append(' ').append(Long.toHexString(rkey)).append(' ').append(Long.toHexString(compareAdd))
                    .append(' ').append(Long.toHexString(swap));
            for (Sge s : sges) {
                b.append(' ').append(s.encode());
            }
            return b.toString();
        }

        static Wr decode(String[] f, int i) {
            Wr w = new Wr(Opcode.valueOf(f[i]), Wire.num(f[i + 1]));
            w.flags((int) Wire.num(f[i + 2])).imm((int) Wire.num(f[i + 3])).remote(Wire.num(f[i + 4]), Wire.num(f[i + 5]))
                    .compareAdd(Wire.num(f[i + 6])).swap(Wire.num(f[i + 7]));
            for (int j = i + 8; j < f.length; j++) {
                w.sges.add(Sge.decode(f[j]));
            }
            return w;
        }

        @Override
        public String toString() {
            return "Wr{" + encode() + "}";
        }
    }

    /** @return a name for messages */
    String name();

    /** @return this peer's process id */
    long pid();

    /** Allocates a host region; returns its address. */
    long alloc(String region, long bytes);

    /** Fills a region range with the pattern of a seed ({@link Payloads#fill}). */
    void fill(String region, long offset, long length, long seed);

    /** Writes bytes into a region. */
    void write(String region, long offset, byte[] data);

    /** Reads bytes of a region. */
    byte[] read(String region, long offset, int length);

    /** @return the CRC-32C of a region range */
    int crc(String region, long offset, long length);

    /** @return the 64-bit word at an offset of a region */
    long get64(String region, long offset);

    /** Writes a 64-bit word at an offset of a region. */
    void set64(String region, long offset, long value);

    /** Registers a range of a region. */
    MrInfo register(String mr, String region, long offset, long length, int access);

    /** Deregisters. */
    void deregister(String mr);

    /** Creates a queue pair; returns its endpoint. */
    Endpoint createQp(String qp, QueuePairConfig config);

    /** Connects a queue pair to a peer's endpoint. */
    void connect(String qp, Endpoint remote);

    /** Posts a receive. */
    void postRecv(String qp, long wrId, Sge... sges);

    /** Posts a send and rings it from the calling thread. */
    void postSend(String qp, Wr wr);

    /**
     * Polls one completion.
     *
     * @return the completion, or null if none came within the timeout
     */
    Cqe poll(String qp, Cq cq, Duration timeout);

    /** @return a queue pair's state */
    QpStatus status(String qp);

    /** Closes a queue pair. */
    void closeQp(String qp);

    /** Starts a background {@link Traffic#sink} on a queue pair. */
    void startSink(String job, String qp, String mr, long count, int minSize, int maxSize, Duration timeout);

    /** Starts a background {@link Traffic#source} on a queue pair. */
    void startSource(String job, String qp, String mr, long count, int minSize, int maxSize, int signalEvery,
                     Duration timeout);

    /** Waits for a background job's result. */
    Traffic.Result await(String job, Duration timeout);

    /** Closes this peer's NIC (the peer's process stays up). */
    void closeNic();

    @Override
    void close();

    /**
     * Creates a queue pair on each side and connects them to each other.
     *
     * @param a      one side
     * @param qa     its queue pair's name
     * @param b      the other side
     * @param qb     its queue pair's name
     * @param config sizes, the same on both sides
     */
    static void connectPair(Peer a, String qa, Peer b, String qb, QueuePairConfig config) {
        Endpoint ea = a.createQp(qa, config);
        Endpoint eb = b.createQp(qb, config);
        a.connect(qa, eb);
        b.connect(qb, ea);
    }
}

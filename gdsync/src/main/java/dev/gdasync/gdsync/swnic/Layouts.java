package dev.gdasync.gdsync.swnic;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Byte layouts of the software NIC's shared-memory files. Every process of a job maps its peers'
 * files, so these offsets are a format: {@link #VERSION} changes when they do. All values are in
 * the machine's byte order (the files never leave the node). See {@code docs/swnic-shm-format.md}.
 */
final class Layouts {
    static final int VERSION = 3;
    static final long PAGE = 4096;
    static final long LINE = 64;

    static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private Layouts() {
    }

    /** The node file: who the process is, whether it is alive, and its memory-region table. */
    static final class Node {
        static final long MAGIC = 0x45444F4E53414447L; // "GDASNODE" little-endian
        static final long OFF_MAGIC = 0;
        static final long OFF_VERSION = 8;
        static final long OFF_MR_CAPACITY = 12;
        static final long OFF_PID = 16;
        static final long OFF_START_MILLIS = 24;
        /** Own cache line: written at open and close only. */
        static final long OFF_STATE = 64;
        static final long MR_TABLE = PAGE;

        static final int STATE_ALIVE = 1;
        static final int STATE_CLOSED = 2;

        static long size(int mrCapacity) {
            return MR_TABLE + (long) mrCapacity * Mr.SIZE;
        }

        private Node() {
        }
    }

    /**
     * One memory-region table entry. A reader checks the key, reads the fields, then checks the key
     * again: keys are never reused, so an entry that changed under it shows a different key.
     */
    static final class Mr {
        static final long SIZE = 64;
        static final long OFF_RKEY = 0;
        static final long OFF_LKEY = 8;
        static final long OFF_ADDRESS = 16;
        static final long OFF_LENGTH = 24;
        static final long OFF_REGION_ID = 32;
        static final long OFF_REGION_OFFSET = 40;
        static final long OFF_ACCESS = 48;
        /** The kind of the registered region: {@link #KIND_HOST} or {@link #KIND_DEVICE}. */
        static final long OFF_KIND = 52;

        /** A host region: its bytes are in the file {@code region-<id>}. */
        static final int KIND_HOST = 0;
        /** A device region: its IPC handle is in the file {@code device-<id>} ({@link Device}). */
        static final int KIND_DEVICE = 1;

        /** Low key bits hold the table slot; the other 48 bits are random. */
        static final int SLOT_BITS = 16;
        static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
        static final int MAX_CAPACITY = 1 << SLOT_BITS;

        private Mr() {
        }
    }

    /**
     * The file {@code device-<id>} that publishes a device region to the node: its CUDA IPC handle, and
     * who maps it. The owner writes the fields, then the magic with a release store. An importer claims a
     * slot (CAS of its pid over 0), writes its start time, then checks that the state is still live; the
     * owner sets the state to closing, then waits until every slot is free or names a dead process
     * before it frees the memory.
     */
    static final class Device {
        static final long MAGIC = 0x4D56454453414447L; // "GDASDEVM" little-endian
        static final long OFF_MAGIC = 0;
        static final long OFF_VERSION = 8;
        static final long OFF_DEVICE = 12;
        static final long OFF_REGION_ID = 16;
        static final long OFF_LENGTH = 24;
        static final long OFF_ADDRESS = 32;
        /** 0 when the handle is valid, else the CUresult with which the owner failed to get it (-1: no result). */
        static final long OFF_HANDLE_RESULT = 40;
        static final long OFF_HANDLE = 64;
        static final int HANDLE_BYTES = 64;
        /** Own line: {@link #STATE_LIVE} or {@link #STATE_CLOSING}. */
        static final long OFF_STATE = 128;
        static final long SLOTS = 256;
        static final long SLOT_SIZE = 16;
        static final long SLOT_OFF_PID = 0;
        static final long SLOT_OFF_START_MILLIS = 8;
        static final long SIZE = PAGE;
        static final int SLOT_COUNT = (int) ((SIZE - SLOTS) / SLOT_SIZE);

        static final int STATE_LIVE = 1;
        static final int STATE_CLOSING = 2;

        static String fileName(long regionId) {
            return "device-" + regionId;
        }

        static long slot(int i) {
            return SLOTS + i * SLOT_SIZE;
        }

        private Device() {
        }
    }

    /** The queue pair file: header words, then the send queue, receive queue and both CQs. */
    static final class Qp {
        static final long MAGIC = 0x3130505153414447L; // "GDASQP01"
        static final long OFF_MAGIC = 0;
        static final long OFF_VERSION = 8;
        static final long OFF_QPN = 12;
        static final long OFF_SEND_DEPTH = 16;
        static final long OFF_RECV_DEPTH = 20;
        static final long OFF_SEND_CQ_DEPTH = 24;
        static final long OFF_TOKEN = 32;
        /** Own line: the owner's state and error detail; read by the peer. */
        static final long OFF_STATE = 64;
        static final long OFF_ERROR_DETAIL = 68;
        /** The token of the queue pair this one is connected to; written at connect. */
        static final long OFF_REMOTE_TOKEN = 72;
        /** Own line: the doorbell record, a cumulative producer index. */
        static final long OFF_DBREC = 128;
        /** Own line: the doorbell. */
        static final long OFF_DOORBELL = 192;
        /** Own line: receive entries claimed so far, advanced by CAS by the peer's executor or our flusher. */
        static final long OFF_RQ_CLAIMED = 256;
        static final long HEADER = PAGE;

        final long sq;
        final long rq;
        final long sendCq;
        final long recvCq;
        final long sendRelease;
        final long recvRelease;
        final long size;

        Qp(int sendDepth, int recvDepth, int sendCqDepth) {
            sq = HEADER;
            rq = align(sq + (long) sendDepth * Wqe.SIZE);
            sendCq = align(rq + (long) recvDepth * Rqe.SIZE);
            recvCq = align(sendCq + (long) sendCqDepth * Cqe.SIZE);
            sendRelease = align(recvCq + (long) recvDepth * Cqe.SIZE);
            recvRelease = align(sendRelease + (long) sendCqDepth * 4);
            size = align(recvRelease + (long) recvDepth * 4);
        }

        private static long align(long v) {
            return (v + PAGE - 1) & -PAGE;
        }
    }

    /** A send queue entry. */
    static final class Wqe {
        static final long SIZE = 256;
        static final long OFF_WR_ID = 0;
        static final long OFF_OPCODE = 8;      // byte
        static final long OFF_FLAGS = 9;       // byte
        static final long OFF_NUM_SGE = 10;    // byte
        static final long OFF_LENGTH = 12;     // int: payload bytes
        static final long OFF_REMOTE_ADDR = 16;
        static final long OFF_RKEY = 24;
        static final long OFF_COMPARE_ADD = 32;
        static final long OFF_SWAP = 40;
        static final long OFF_IMM = 48;
        static final long OFF_DATA = 64;       // SGEs or inline bytes
        static final int MAX_INLINE = (int) (SIZE - OFF_DATA);

        private Wqe() {
        }
    }

    /** A receive queue entry; {@link #OFF_SEQ} is written last and says the entry is posted. */
    static final class Rqe {
        static final long SIZE = 256;
        static final long OFF_WR_ID = 0;
        static final long OFF_NUM_SGE = 8;
        static final long OFF_SEQ = 12;
        static final long OFF_SGE = 16;

        private Rqe() {
        }
    }

    /** A scatter-gather entry inside a WQE or RQE. */
    static final class Sge {
        static final long SIZE = 24;
        static final long OFF_ADDR = 0;
        static final long OFF_LKEY = 8;
        static final long OFF_LENGTH = 16;

        private Sge() {
        }
    }

    /**
     * A completion queue entry, one cache line. The validity word of entry n holds n + 1 once the
     * entry is written (the word is the entry's last, written with release semantics).
     */
    static final class Cqe {
        static final long SIZE = 64;
        static final long OFF_WR_ID = 0;
        static final long OFF_BYTE_LEN = 8;
        static final long OFF_IMM = 12;
        static final long OFF_QPN = 16;
        static final long OFF_OPCODE = 20;     // short
        static final long OFF_STATUS = 22;     // byte
        static final long OFF_FLAGS = 23;      // byte: bit 0 = immediate present
        static final long OFF_DETAIL = 24;
        static final long OFF_WQE_INDEX = 28;
        static final long OFF_VALIDITY = 60;

        static final int FLAG_IMM = 1;

        private Cqe() {
        }
    }
}

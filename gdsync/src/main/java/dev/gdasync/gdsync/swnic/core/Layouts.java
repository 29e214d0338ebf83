package dev.gdasync.gdsync.swnic.core;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Byte layouts of the software NIC's shared-memory files. Every process of a job maps its peers'
 * files, so these offsets are a format: {@link #VERSION} changes when they do. All values are in
 * the machine's byte order (the files never leave the node). See {@code docs/swnic-shm-format.md}.
 */
public final class Layouts {
    public static final int VERSION = 3;
    public static final long PAGE = 4096;
    public static final long LINE = 64;

    public static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    public static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private Layouts() {
    }

    /** The node file: who the process is, whether it is alive, and its memory-region table. */
    public static final class Node {
        public static final long MAGIC = 0x45444F4E53414447L; // "GDASNODE" little-endian
        public static final long OFF_MAGIC = 0;
        public static final long OFF_VERSION = 8;
        public static final long OFF_MR_CAPACITY = 12;
        public static final long OFF_PID = 16;
        public static final long OFF_START_MILLIS = 24;
        /** Own cache line: written at open and close only. */
        public static final long OFF_STATE = 64;
        public static final long MR_TABLE = PAGE;

        public static final int STATE_ALIVE = 1;
        public static final int STATE_CLOSED = 2;

        public static long size(int mrCapacity) {
            return MR_TABLE + (long) mrCapacity * Mr.SIZE;
        }

        private Node() {
        }
    }

    /**
     * The wake file: how many threads of the process are parked (or about to park) waiting for their peers, and the
     * word they park on (a futex). A peer's executor maps it writable; after a request it completed into the process
     * it reads the count and, when someone sleeps, bumps the word and wakes the sleepers. Two cache lines: the count
     * is written by sleepers and read by every peer, the word written by wakers.
     */
    public static final class Wake {
        public static final long OFF_SLEEPERS = 0;
        public static final long OFF_SEQ = 64;
        public static final long SIZE = 128;

        private Wake() {
        }
    }

    /**
     * One memory-region table entry. A reader checks the key, reads the fields, then checks the key
     * again: keys are never reused, so an entry that changed under it shows a different key.
     */
    public static final class Mr {
        public static final long SIZE = 64;
        public static final long OFF_RKEY = 0;
        public static final long OFF_LKEY = 8;
        public static final long OFF_ADDRESS = 16;
        public static final long OFF_LENGTH = 24;
        public static final long OFF_REGION_ID = 32;
        public static final long OFF_REGION_OFFSET = 40;
        public static final long OFF_ACCESS = 48;
        /** The kind of the registered region: {@link #KIND_HOST} or {@link #KIND_DEVICE}. */
        public static final long OFF_KIND = 52;

        /** A host region: its bytes are in the file {@code region-<id>}. */
        public static final int KIND_HOST = 0;
        /** A device region: its IPC handle is in the file {@code device-<id>} ({@link Device}). */
        public static final int KIND_DEVICE = 1;

        /** Low key bits hold the table slot; the other 48 bits are random. */
        public static final int SLOT_BITS = 16;
        public static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
        public static final int MAX_CAPACITY = 1 << SLOT_BITS;

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
    public static final class Device {
        public static final long MAGIC = 0x4D56454453414447L; // "GDASDEVM" little-endian
        public static final long OFF_MAGIC = 0;
        public static final long OFF_VERSION = 8;
        public static final long OFF_DEVICE = 12;
        public static final long OFF_REGION_ID = 16;
        public static final long OFF_LENGTH = 24;
        public static final long OFF_ADDRESS = 32;
        /** 0 when the handle is valid, else the CUresult with which the owner failed to get it (-1: no result). */
        public static final long OFF_HANDLE_RESULT = 40;
        public static final long OFF_HANDLE = 64;
        public static final int HANDLE_BYTES = 64;
        /** Own line: {@link #STATE_LIVE} or {@link #STATE_CLOSING}. */
        public static final long OFF_STATE = 128;
        public static final long SLOTS = 256;
        public static final long SLOT_SIZE = 16;
        public static final long SLOT_OFF_PID = 0;
        public static final long SLOT_OFF_START_MILLIS = 8;
        public static final long SIZE = PAGE;
        public static final int SLOT_COUNT = (int) ((SIZE - SLOTS) / SLOT_SIZE);

        public static final int STATE_LIVE = 1;
        public static final int STATE_CLOSING = 2;

        public static String fileName(long regionId) {
            return "device-" + regionId;
        }

        public static long slot(int i) {
            return SLOTS + i * SLOT_SIZE;
        }

        private Device() {
        }
    }

    /** The queue pair file: header words, then the send queue, receive queue and both CQs. */
    public static final class Qp {
        public static final long MAGIC = 0x3130505153414447L; // "GDASQP01"
        public static final long OFF_MAGIC = 0;
        public static final long OFF_VERSION = 8;
        public static final long OFF_QPN = 12;
        public static final long OFF_SEND_DEPTH = 16;
        public static final long OFF_RECV_DEPTH = 20;
        public static final long OFF_SEND_CQ_DEPTH = 24;
        public static final long OFF_TOKEN = 32;
        /** Own line: the owner's state and error detail; read by the peer. */
        public static final long OFF_STATE = 64;
        public static final long OFF_ERROR_DETAIL = 68;
        /** The token of the queue pair this one is connected to; written at connect. */
        public static final long OFF_REMOTE_TOKEN = 72;
        /** Own line: the doorbell record, a cumulative producer index. */
        public static final long OFF_DBREC = 128;
        /** Own line: the doorbell. */
        public static final long OFF_DOORBELL = 192;
        /** Own line: receive entries claimed so far, advanced by CAS by the peer's executor or our flusher. */
        public static final long OFF_RQ_CLAIMED = 256;
        public static final long HEADER = PAGE;

        /** Offset of the send queue. */
        public final long sq;
        /** Offset of the receive queue. */
        public final long rq;
        /** Offset of the send completion queue. */
        public final long sendCq;
        /** Offset of the receive completion queue. */
        public final long recvCq;
        /** Offset of the send CQ's release words. */
        public final long sendRelease;
        /** Offset of the receive CQ's release words. */
        public final long recvRelease;
        /** The file's size. */
        public final long size;

        /**
         * @param sendDepth   send queue entries
         * @param recvDepth   receive queue entries (and receive CQ entries)
         * @param sendCqDepth send CQ entries
         */
        public Qp(int sendDepth, int recvDepth, int sendCqDepth) {
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
    public static final class Wqe {
        public static final long SIZE = 256;
        public static final long OFF_WR_ID = 0;
        public static final long OFF_OPCODE = 8;      // byte
        public static final long OFF_FLAGS = 9;       // byte
        public static final long OFF_NUM_SGE = 10;    // byte
        public static final long OFF_LENGTH = 12;     // int: payload bytes
        public static final long OFF_REMOTE_ADDR = 16;
        public static final long OFF_RKEY = 24;
        public static final long OFF_COMPARE_ADD = 32;
        public static final long OFF_SWAP = 40;
        public static final long OFF_IMM = 48;
        public static final long OFF_DATA = 64;       // SGEs or inline bytes
        public static final int MAX_INLINE = (int) (SIZE - OFF_DATA);

        private Wqe() {
        }
    }

    /** A receive queue entry; {@link #OFF_SEQ} is written last and says the entry is posted. */
    public static final class Rqe {
        public static final long SIZE = 256;
        public static final long OFF_WR_ID = 0;
        public static final long OFF_NUM_SGE = 8;
        public static final long OFF_SEQ = 12;
        public static final long OFF_SGE = 16;

        private Rqe() {
        }
    }

    /** A scatter-gather entry inside a WQE or RQE. */
    public static final class Sge {
        public static final long SIZE = 24;
        public static final long OFF_ADDR = 0;
        public static final long OFF_LKEY = 8;
        public static final long OFF_LENGTH = 16;

        private Sge() {
        }
    }

    /**
     * A completion queue entry, one cache line. The validity word of entry n holds n + 1 once the
     * entry is written (the word is the entry's last, written with release semantics).
     */
    public static final class Cqe {
        public static final long SIZE = 64;
        public static final long OFF_WR_ID = 0;
        public static final long OFF_BYTE_LEN = 8;
        public static final long OFF_IMM = 12;
        public static final long OFF_QPN = 16;
        public static final long OFF_OPCODE = 20;     // short
        public static final long OFF_STATUS = 22;     // byte
        public static final long OFF_FLAGS = 23;      // byte: bit 0 = immediate present
        public static final long OFF_DETAIL = 24;
        public static final long OFF_WQE_INDEX = 28;
        public static final long OFF_VALIDITY = 60;

        public static final int FLAG_IMM = 1;

        private Cqe() {
        }
    }
}

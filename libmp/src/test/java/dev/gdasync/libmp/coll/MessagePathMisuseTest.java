package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Collectives whose ranks disagree, on the message path (the shared-memory path turned off, two ranks as threads):
 * each case fails both ranks with the message naming both calls, long before the wait timeout (20 s here), and the
 * communicator works afterwards (an exact allreduce and a barrier follow every case, so case k is call #3k).
 */
class MessagePathMisuseTest {
    private static final long BYTES = 512;

    @TempDir
    Path shm;

    @Test
    void everyDisagreementFailsBothRanksNamingBothCalls() throws Exception {
        CollRanks.runMessages(2, shm, coll -> new Cases(coll).run());
    }

    private static final class Cases {
        final Communicator w;
        final int me;
        final MemorySegment send;
        final MemorySegment recv;
        final MpRegistration sendReg;
        final MpRegistration recvReg;
        int number;

        Cases(Collectives coll) {
            Mp mp = coll.mp();
            w = coll.world();
            me = w.rank();
            send = mp.allocate(BYTES);
            recv = mp.allocate(BYTES);
            sendReg = mp.register(send);
            recvReg = mp.register(recv);
        }

        /** Both ranks' call fails at once with this rank's call, then the other rank's, as the message names them. */
        void refused(String mine, String theirs, Runnable call) {
            send.fill((byte) (me + 1));
            long start = System.nanoTime();
            CollectiveException e = assertThrows(CollectiveException.class, call::run);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(mine + " (#" + number + " on communicator 0, rank " + me + " of 2): rank " + (1 - me) + " called "
                    + theirs + " as its #" + number + ": the ranks disagree", e.getMessage());
            assertTrue(ms < 5_000, "refused after " + ms + " ms, not at once");
            usable();
        }

        /** The next collectives work: an exact allreduce of the ranks' longs, then a barrier. */
        void usable() {
            send.set(JAVA_LONG, 0, 10L + me);
            w.allreduce(send.asSlice(0, 8), sendReg, recv.asSlice(0, 8), recvReg, 1, DataType.INT64, ReduceOp.SUM);
            assertEquals(21L, recv.get(JAVA_LONG, 0), "the allreduce after the refusal");
            w.barrier();
            number += 3;
        }

        void run() {
            refused("reduce of 256 bytes (INT64 SUM) to root " + me, "reduce of 256 bytes (INT64 SUM) to root " + (1 - me),
                    () -> w.reduce(send.asSlice(0, 256), sendReg, recv.asSlice(0, 256), recvReg, 32, DataType.INT64,
                            ReduceOp.SUM, me));
            refused("allreduce of 512 bytes (INT64 " + (me == 0 ? "SUM" : "MAX") + ")",
                    "allreduce of 512 bytes (INT64 " + (me == 0 ? "MAX" : "SUM") + ")",
                    () -> w.allreduce(send, sendReg, recv, recvReg, 64, DataType.INT64, me == 0 ? ReduceOp.SUM
                            : ReduceOp.MAX));
            refused("allreduce of 512 bytes (" + (me == 0 ? "INT64" : "FLOAT64") + " SUM)",
                    "allreduce of 512 bytes (" + (me == 0 ? "FLOAT64" : "INT64") + " SUM)",
                    () -> w.allreduce(send, sendReg, recv, recvReg, 64, me == 0 ? DataType.INT64 : DataType.FLOAT64,
                            ReduceOp.SUM));
            refused("allreduce of " + (me == 0 ? 512 : 256) + " bytes (INT64 SUM)",
                    "allreduce of " + (me == 0 ? 256 : 512) + " bytes (INT64 SUM)",
                    () -> w.allreduce(send, sendReg, recv, recvReg, me == 0 ? 64 : 32, DataType.INT64, ReduceOp.SUM));
            refused(me == 0 ? "allgather of 256 bytes per rank" : "alltoall of 256 bytes per rank",
                    me == 0 ? "alltoall of 256 bytes per rank" : "allgather of 256 bytes per rank", () -> {
                        if (me == 0) {
                            w.allgather(send.asSlice(0, 256), sendReg, recv, recvReg);
                        } else {
                            w.alltoall(send, sendReg, recv, recvReg, 256);
                        }
                    });
            refused(me == 0 ? "allgather of 256 bytes per rank" : "allgather of 128 bytes per rank",
                    me == 0 ? "allgather of 128 bytes per rank" : "allgather of 256 bytes per rank",
                    () -> w.allgather(send.asSlice(0, me == 0 ? 256 : 128), sendReg, recv, recvReg));
            refused(me == 0 ? "barrier" : "bcast of 512 bytes from root 0",
                    me == 0 ? "bcast of 512 bytes from root 0" : "barrier", () -> {
                        if (me == 0) {
                            w.barrier();
                        } else {
                            w.bcast(recv, recvReg, 0);
                        }
                    });
            // Each rank its own root: both only send, and each looks at the other's board past its stuck send.
            refused("bcast of 512 bytes from root " + me, "bcast of 512 bytes from root " + (1 - me),
                    () -> w.bcast(me == 0 ? send : recv, me == 0 ? sendReg : recvReg, me));
            // The root's sends complete (the receiver drains them), so the root compares the receiver's call after.
            refused("bcast of " + (me == 0 ? 512 : 256) + " bytes from root 0",
                    "bcast of " + (me == 0 ? 256 : 512) + " bytes from root 0",
                    () -> w.bcast(me == 0 ? send : recv.asSlice(0, 256), me == 0 ? sendReg : recvReg, 0));
            refused(me == 0 ? "reduceScatter of 256 bytes per rank (INT64 SUM)" : "allreduce of 512 bytes (INT64 SUM)",
                    me == 0 ? "allreduce of 512 bytes (INT64 SUM)" : "reduceScatter of 256 bytes per rank (INT64 SUM)",
                    () -> {
                        if (me == 0) {
                            w.reduceScatter(send, sendReg, recv.asSlice(0, 256), recvReg, 32, DataType.INT64,
                                    ReduceOp.SUM);
                        } else {
                            w.allreduce(send, sendReg, recv, recvReg, 64, DataType.INT64, ReduceOp.SUM);
                        }
                    });
        }
    }
}

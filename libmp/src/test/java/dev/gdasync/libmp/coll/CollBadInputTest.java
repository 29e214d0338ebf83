package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad input gives a precise error and changes nothing; a size disagreement between ranks fails both ranks at once on
 * the shared-memory path, the receiver on the message path.
 */
class CollBadInputTest {
    @TempDir
    Path shm;

    @Test
    void refusedCallsNameTheProblemAndTouchNothing() throws Exception {
        CollRanks.run(2, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            MemorySegment send = mp.allocate(64);
            MemorySegment recv = mp.allocate(64);
            MemorySegment loose = mp.allocate(64);
            MpRegistration sr = mp.register(send);
            MpRegistration rr = mp.register(recv);
            recv.fill((byte) 7);
            send.fill((byte) 1);
            refused(() -> world.ialltoall(send, sr, loose, rr, 32), IllegalArgumentException.class,
                    "recv [0x" + Long.toHexString(loose.address()) + ", +64) is not inside recvReg ");
            refused(() -> world.ialltoall(send, sr, recv, rr, 33), IllegalArgumentException.class,
                    "send holds 64 bytes but size × blockBytes = 66");
            refused(() -> world.ialltoall(send, sr, recv, rr, -1), IllegalArgumentException.class,
                    "blockBytes must be >= 0, got -1");
            refused(() -> world.ialltoall(send, null, recv, rr, 1), NullPointerException.class, "sendReg must not be null");
            refused(() -> world.ialltoall(send, sr, send, sr, 1), IllegalArgumentException.class, "send and recv overlap");
            refused(() -> world.iallgather(send, sr, recv.asSlice(0, 63), rr),
                    IllegalArgumentException.class, "recv holds 63 bytes but size × send.byteSize() = 128");
            long[] two = {8, 8};
            long[] displ = {0, 8};
            refused(() -> world.ialltoallv(send, sr, new long[] {8}, displ, recv, rr, two, displ),
                    IllegalArgumentException.class, "sendCounts and sendDispls need 2 entries, got 1 and 2");
            refused(() -> world.ialltoallv(send, sr, two, new long[] {0, 60}, recv, rr, two, displ),
                    IllegalArgumentException.class, "sendDispls[1] + sendCounts[1] = 68 is past the end of send (64 bytes)");
            int me = world.rank();
            long[] wrongSelf = me == 0 ? new long[] {4, 8} : new long[] {8, 4};
            refused(() -> world.ialltoallv(send, sr, two, displ, recv, rr, wrongSelf, displ),
                    IllegalArgumentException.class, "sendCounts[" + me + "] = 8 but recvCounts[" + me + "] = 4");
            // Counts near the overflow edge: the library's own message, not an ArithmeticException.
            long half = Long.MAX_VALUE / 2;
            refused(() -> world.allreduce(send, sr, recv, rr, half, DataType.INT64, ReduceOp.SUM),
                    IllegalArgumentException.class, "allreduce: send's elements " + half + " × 8 (INT64 bytes each) is"
                            + " past the largest long");
            refused(() -> world.alltoall(send, sr, recv, rr, half + 1, DataType.INT32), IllegalArgumentException.class,
                    "alltoall: count " + (half + 1) + " × 2 (ranks) is past the largest long");
            refused(() -> world.allgather(send, sr, recv, rr, half + 1, DataType.INT32), IllegalArgumentException.class,
                    "allgather: sendCount " + (half + 1) + " × 2 (ranks) is past the largest long");
            refused(() -> world.reduceScatter(send, sr, recv, rr, half + 1, DataType.INT32, ReduceOp.SUM),
                    IllegalArgumentException.class, "reduceScatter: recvCount " + (half + 1) + " × 2 (ranks) is past");
            refused(() -> world.ialltoall(send, sr, recv, rr, half + 1), IllegalArgumentException.class,
                    "ialltoall: blockBytes " + (half + 1) + " × 2 (ranks) is past the largest long");
            mp.deregister(sr);
            refused(() -> world.ibcast(send, sr, 0), IllegalArgumentException.class, "reg MpRegistration{");
            for (long i = 0; i < 64; i++) {
                assertEquals((byte) 7, recv.get(ValueLayout.JAVA_BYTE, i), "recv untouched at " + i);
            }
            assertEquals(0, coll.active(), "nothing was started");
            // The communicator still works after the refusals: the collective numbers did not advance.
            MpRegistration sr2 = mp.register(send);
            world.alltoall(send, sr2, recv, rr, 32);
            assertEquals((byte) 1, recv.get(ValueLayout.JAVA_BYTE, 63));
        });
    }

    @Test
    void aSizeDisagreementFailsBothRanksAtOnceOnTheSharedMemoryPath() throws Exception {
        CollRanks.runShared(2, shm, CollRanks::disagreeingBcast);
    }

    @Test
    void aSizeDisagreementFailsBothRanksAndLeavesTheBlockUnwrittenOnTheMessagePath() throws Exception {
        CollRanks.runMessages(2, shm, CollRanks::disagreeingBcast);
    }

    private static void refused(Executable call, Class<? extends Throwable> type, String start) {
        Throwable t = assertThrows(type, call);
        assertTrue(t.getMessage().startsWith(start), "message was: " + t.getMessage());
    }
}

package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.testutil.Misuse;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The misuse suite of collectives between two rank processes on one host (run by {@link CollMisuseProcessTest}, on
 * the host engine, and under {@code --proxies} on the offload engine): collectives whose roots, sizes, types,
 * operators or kinds differ between the ranks. Each case asserts the exact message on each rank, that it came at
 * once, that the receive buffer and the guard bytes around both buffers are unchanged, and that the next collective
 * works.
 */
public final class CollMisuseMain {
    private static final int GUARDS = 256;
    private static final int BYTES = 512;
    private static final byte GUARD = (byte) 0xA5;
    private static final byte RECV = (byte) 0x3C;

    private CollMisuseMain() {
    }

    /**
     * @param args {@code host} or {@code offload}
     */
    public static void main(String[] args) {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(60));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg);
             Collectives coll = args[0].equals("offload") ? Collectives.offload(mp) : Collectives.host(mp)) {
            new Suite(mp, coll).run();
        }
    }

    private static final class Suite {
        final Communicator w;
        final int me;
        final MemorySegment sendAll;
        final MemorySegment recvAll;
        final MemorySegment send;
        final MemorySegment recv;
        final MpRegistration sendReg;
        final MpRegistration recvReg;
        final Misuse m = new Misuse();

        Suite(Mp mp, Collectives coll) {
            w = coll.world();
            me = w.rank();
            sendAll = mp.allocate(2L * GUARDS + BYTES);
            recvAll = mp.allocate(2L * GUARDS + BYTES);
            sendReg = mp.register(sendAll);
            recvReg = mp.register(recvAll);
            send = sendAll.asSlice(GUARDS, BYTES);
            recv = recvAll.asSlice(GUARDS, BYTES);
            reset();
        }

        void reset() {
            sendAll.fill(GUARD);
            recvAll.fill(GUARD);
            for (int i = 0; i < BYTES; i++) {
                send.set(JAVA_BYTE, i, (byte) (me * 16 + i % 8 + 1));
            }
            recv.fill(RECV);
        }

        /** The guards around both buffers, the send buffer and the receive buffer are as they were. */
        String canaries() {
            for (int i = 0; i < GUARDS; i++) {
                for (MemorySegment all : new MemorySegment[] {sendAll, recvAll}) {
                    if (all.get(JAVA_BYTE, i) != GUARD || all.get(JAVA_BYTE, GUARDS + BYTES + i) != GUARD) {
                        return "rank " + me + ": a guard byte changed";
                    }
                }
            }
            for (int i = 0; i < BYTES; i++) {
                if (recv.get(JAVA_BYTE, i) != RECV) {
                    return "rank " + me + ": the receive buffer changed at byte " + i;
                }
                if (send.get(JAVA_BYTE, i) != (byte) (me * 16 + i % 8 + 1)) {
                    return "rank " + me + ": the send buffer changed at byte " + i;
                }
            }
            return null;
        }

        /** The next collective works: an allreduce of the two ranks' longs. */
        String usable() {
            MemorySegment r = recv.asSlice(0, 64);
            w.allreduce(send.asSlice(0, 64), sendReg, r, recvReg, 8, DataType.INT64, ReduceOp.SUM);
            long want = send.asSlice(0, 8).get(JAVA_LONG, 0) + otherRanksFirstWord();
            long got = r.get(JAVA_LONG, 0);
            reset();
            w.barrier();
            return got == want ? null : "rank " + me + ": the allreduce after the refusal gave " + got + ", not " + want;
        }

        long otherRanksFirstWord() {
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v |= (long) ((1 - me) * 16 + i + 1) << (8 * i);
            }
            return v;
        }

        /**
         * The shared-memory path's refusal on this rank: its own call, then the other rank's. Each case is followed by
         * an allreduce and a barrier (the usability check), so case k's collective is number 3k on the communicator.
         */
        String disagree(String mine, String theirs, int number) {
            return mine + " (#" + number + " on communicator 0, rank " + me + " of 2): rank " + (1 - me) + " called "
                    + theirs + " as its #" + number + ": the ranks disagree; nothing was written";
        }

        void run() {
            Misuse.Check canaries = this::canaries;
            Misuse.Check usable = this::usable;
            m.expect("bcast-roots-differ", CollectiveException.class,
                    disagree("bcast of 512 bytes from root " + me, "bcast of 512 bytes from root " + (1 - me), 0),
                    () -> w.bcast(me == 0 ? send : recv, me == 0 ? sendReg : recvReg, me), canaries, usable);
            m.expect("bcast-sizes-differ", CollectiveException.class,
                    disagree("bcast of " + (me == 0 ? 512 : 256) + " bytes from root 0", "bcast of " + (me == 0 ? 256 : 512)
                            + " bytes from root 0", 3),
                    () -> w.bcast(me == 0 ? send : recv.asSlice(0, 256), me == 0 ? sendReg : recvReg, 0), canaries, usable);
            m.expect("allreduce-counts-differ", CollectiveException.class,
                    disagree("allreduce of " + (me == 0 ? 512 : 256) + " bytes (INT64 SUM)", "allreduce of "
                            + (me == 0 ? 256 : 512) + " bytes (INT64 SUM)", 6),
                    () -> w.allreduce(send, sendReg, recv, recvReg, me == 0 ? 64 : 32, DataType.INT64, ReduceOp.SUM),
                    canaries, usable);
            m.expect("allreduce-types-differ", CollectiveException.class,
                    disagree("allreduce of 512 bytes (" + (me == 0 ? "INT64" : "FLOAT64") + " SUM)", "allreduce of 512 bytes ("
                            + (me == 0 ? "FLOAT64" : "INT64") + " SUM)", 9),
                    () -> w.allreduce(send, sendReg, recv, recvReg, 64, me == 0 ? DataType.INT64 : DataType.FLOAT64,
                            ReduceOp.SUM), canaries, usable);
            m.expect("allreduce-operators-differ", CollectiveException.class,
                    disagree("allreduce of 512 bytes (INT64 " + (me == 0 ? "SUM" : "MAX") + ")", "allreduce of 512 bytes (INT64 "
                            + (me == 0 ? "MAX" : "SUM") + ")", 12),
                    () -> w.allreduce(send, sendReg, recv, recvReg, 64, DataType.INT64, me == 0 ? ReduceOp.SUM
                            : ReduceOp.MAX), canaries, usable);
            m.expect("reduce-roots-differ", CollectiveException.class,
                    disagree("reduce of 256 bytes (INT64 SUM) to root " + me, "reduce of 256 bytes (INT64 SUM) to root "
                            + (1 - me), 15),
                    () -> w.reduce(send.asSlice(0, 256), sendReg, recv.asSlice(0, 256), recvReg, 32, DataType.INT64,
                            ReduceOp.SUM, me), canaries, usable);
            m.expect("allgather-sizes-differ", CollectiveException.class,
                    disagree("allgather of " + (me == 0 ? 256 : 128) + " bytes per rank", "allgather of " + (me == 0 ? 128 : 256)
                            + " bytes per rank", 18),
                    () -> w.allgather(send.asSlice(0, me == 0 ? 256 : 128), sendReg, recv, recvReg), canaries, usable);
            m.expect("alltoall-sizes-differ", CollectiveException.class,
                    disagree("alltoall of " + (me == 0 ? 256 : 128) + " bytes per rank", "alltoall of " + (me == 0 ? 128 : 256)
                            + " bytes per rank", 21),
                    () -> w.alltoall(send, sendReg, recv, recvReg, me == 0 ? 256 : 128), canaries, usable);
            m.expect("allgather-against-alltoall", CollectiveException.class,
                    disagree(me == 0 ? "allgather of 256 bytes per rank" : "alltoall of 256 bytes per rank",
                            me == 0 ? "alltoall of 256 bytes per rank" : "allgather of 256 bytes per rank", 24),
                    () -> {
                        if (me == 0) {
                            w.allgather(send.asSlice(0, 256), sendReg, recv, recvReg);
                        } else {
                            w.alltoall(send, sendReg, recv, recvReg, 256);
                        }
                    }, canaries, usable);
            m.expect("barrier-against-bcast", CollectiveException.class,
                    disagree(me == 0 ? "barrier" : "bcast of 512 bytes from root 0",
                            me == 0 ? "bcast of 512 bytes from root 0" : "barrier", 27),
                    () -> {
                        if (me == 0) {
                            w.barrier();
                        } else {
                            w.bcast(recv, recvReg, 0);
                        }
                    }, canaries, usable);
            m.expect("reduceScatter-against-allreduce", CollectiveException.class,
                    disagree(me == 0 ? "reduceScatter of 256 bytes per rank (INT64 SUM)" : "allreduce of 512 bytes (INT64 SUM)",
                            me == 0 ? "allreduce of 512 bytes (INT64 SUM)" : "reduceScatter of 256 bytes per rank (INT64 SUM)",
                            30),
                    () -> {
                        if (me == 0) {
                            w.reduceScatter(send, sendReg, recv.asSlice(0, 256), recvReg, 32, DataType.INT64,
                                    ReduceOp.SUM);
                        } else {
                            w.allreduce(send, sendReg, recv, recvReg, 64, DataType.INT64, ReduceOp.SUM);
                        }
                    }, canaries, usable);
            m.done();
        }
    }
}

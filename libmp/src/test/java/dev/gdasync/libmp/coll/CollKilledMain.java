package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.testutil.KilledMidCall;

import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The rank main of {@link CollKilledMidCallTest}: every blocking collective of the host engine (on the shared-memory
 * path: one host), a non-blocking one waited, a group and sendrecv with the victim, made by ranks 0 and 2 while
 * rank 1 is killed (see {@link KilledMidCall}).
 */
public final class CollKilledMain {
    private static final int BLOCK = 1024;

    /** The cases by name. */
    public static final Map<String, KilledMidCall.Setup> CASES = new LinkedHashMap<>();

    static {
        CASES.put("barrier", mp -> {
            Communicator w = world(mp);
            return w::barrier;
        });
        CASES.put("bcast", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.bcast(b.send.asSlice(0, BLOCK), b.sendReg, KilledMidCall.VICTIM);
        });
        CASES.put("ibcast+wait", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.wait(b.w.ibcast(b.send.asSlice(0, BLOCK), b.sendReg, KilledMidCall.VICTIM));
        });
        CASES.put("allgather", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.allgather(b.send.asSlice(0, BLOCK), b.sendReg, b.recv, b.recvReg);
        });
        CASES.put("alltoall", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.alltoall(b.send, b.sendReg, b.recv, b.recvReg, BLOCK);
        });
        CASES.put("alltoallv", mp -> {
            Buffers b = new Buffers(mp);
            long[] counts = {BLOCK, BLOCK, BLOCK};
            long[] displs = {0, BLOCK, 2 * BLOCK};
            return () -> b.w.alltoallv(b.send, b.sendReg, counts, displs, b.recv, b.recvReg, counts, displs);
        });
        CASES.put("allreduce", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.allreduce(b.send, b.sendReg, b.recv, b.recvReg, 3 * BLOCK / 8, DataType.INT64, ReduceOp.SUM);
        });
        CASES.put("reduce-to-0", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.reduce(b.send, b.sendReg, b.recv, b.recvReg, BLOCK / 8, DataType.INT64, ReduceOp.SUM, 0);
        });
        CASES.put("reduceScatter", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.reduceScatter(b.send, b.sendReg, b.recv.asSlice(0, BLOCK), b.recvReg, BLOCK / 8,
                    DataType.INT64, ReduceOp.MAX);
        });
        CASES.put("broadcast-typed", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.broadcast(b.send, b.sendReg, BLOCK / 4, DataType.FLOAT32, KilledMidCall.VICTIM);
        });
        CASES.put("allgather-typed", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.allgather(b.send.asSlice(0, BLOCK), b.sendReg, b.recv, b.recvReg, BLOCK / 4,
                    DataType.INT32);
        });
        CASES.put("alltoall-typed", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.alltoall(b.send, b.sendReg, b.recv, b.recvReg, BLOCK / 8, DataType.FLOAT64);
        });
        CASES.put("sendrecv", mp -> {
            Buffers b = new Buffers(mp);
            return () -> b.w.sendrecv(b.send.asSlice(0, BLOCK), b.sendReg, KilledMidCall.VICTIM,
                    b.recv.asSlice(0, BLOCK), b.recvReg, KilledMidCall.VICTIM);
        });
        CASES.put("group+wait", mp -> {
            Buffers b = new Buffers(mp);
            return () -> {
                Group g = b.w.groupStart();
                g.recv(b.recv.asSlice(0, BLOCK), b.recvReg, KilledMidCall.VICTIM);
                g.send(b.send.asSlice(0, BLOCK), b.sendReg, KilledMidCall.VICTIM);
                g.groupEnd();
                b.w.wait(g.groupCall());
            };
        });
    }

    private CollKilledMain() {
    }

    private static Communicator world(Mp mp) {
        Communicator w = Collectives.host(mp).world();
        w.barrier();
        return w;
    }

    /** The world communicator of the host engine, after a first collective, and 3 KiB send and receive buffers. */
    private static final class Buffers {
        final Communicator w;
        final MemorySegment send;
        final MemorySegment recv;
        final MpRegistration sendReg;
        final MpRegistration recvReg;

        Buffers(Mp mp) {
            send = mp.allocate(3 * BLOCK);
            recv = mp.allocate(3 * BLOCK);
            sendReg = mp.register(send);
            recvReg = mp.register(recv);
            w = world(mp);
        }
    }

    /**
     * @param args see {@link KilledMidCall#rankMain}
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        KilledMidCall.rankMain(args, CASES);
    }
}

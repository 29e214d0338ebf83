package dev.gdasync.libmp.coll.msccl;

import java.util.ArrayList;
import java.util.List;

/**
 * The order in which a rank's NIC stream rings its puts, found by running the whole program once, every rank's
 * thread blocks, as counters (no data): a step runs when its dependency, its message and its send slot are there,
 * and every message and acknowledgement it makes is delivered at once. That run is one total order of all events
 * in which every wait comes after what it waits for. Each rank's NIC stream rings in that order and each thread
 * block's stream runs its steps in order, so by induction over the total order the first event not yet done can
 * always run: the streams cannot deadlock. A program that cannot finish this way (a dependency cycle) is refused
 * before anything is enqueued, with each stuck block's rank, step and what it waits for.
 */
final class StreamSchedule {
    /**
     * One ring of the NIC stream.
     *
     * @param ack   true: the acknowledgement of message {@code seq} received by {@code tb}; false: message
     *              {@code seq} sent by {@code tb}, its data and then its flag
     * @param tb    the thread block
     * @param seq   the message's number on its connection, from 1
     * @param bytes the data's length (0 for an acknowledgement)
     */
    record Ring(boolean ack, int tb, long seq, long bytes) {
    }

    private StreamSchedule() {
    }

    /**
     * @param program the program
     * @param plan    the run's geometry (tiles are the same on every rank)
     * @param slots   slots per connection
     * @param rank    the rank whose rings are wanted
     * @return the rank's rings in order
     * @throws IllegalStateException if the program cannot finish
     */
    static List<Ring> rings(MscclProgram program, RunPlan plan, int slots, int rank) {
        int n = program.ngpus();
        int tiles = plan.tiles();
        Block[][] blocks = new Block[n][];
        for (int r = 0; r < n; r++) {
            List<MscclProgram.ThreadBlock> tbs = program.gpus().get(r).tbs();
            blocks[r] = new Block[tbs.size()];
            for (int t = 0; t < tbs.size(); t++) {
                blocks[r][t] = new Block(tbs.get(t), tiles);
            }
        }
        for (int r = 0; r < n; r++) {
            for (Block b : blocks[r]) {
                if (b.tb.send() >= 0) {
                    b.receiver = blocks[b.tb.send()][program.tbConnectedTo(b.tb.send(), r, b.tb.chan(), false)];
                }
                if (b.tb.recv() >= 0) {
                    b.sender = blocks[b.tb.recv()][program.tbConnectedTo(b.tb.recv(), r, b.tb.chan(), true)];
                }
            }
        }
        List<Ring> mine = new ArrayList<>();
        boolean progress = true;
        while (progress) {
            progress = false;
            for (int r = 0; r < n; r++) {
                for (Block b : blocks[r]) {
                    while (b.canRun(blocks[r], slots)) {
                        MscclProgram.Step st = b.tb.steps().get(b.step);
                        if (st.type().receives()) {
                            b.recvSeq++;
                            b.sender.acked = b.recvSeq;
                            if (r == rank) {
                                mine.add(new Ring(true, b.tb.id(), b.recvSeq, 0));
                            }
                        }
                        if (st.type().sends()) {
                            b.sendSeq++;
                            b.receiver.delivered = b.sendSeq;
                            if (r == rank) {
                                mine.add(new Ring(false, b.tb.id(), b.sendSeq, st.cnt() * plan.tileBytes(b.tile)));
                            }
                        }
                        if (st.hasdep()) {
                            b.semaphore = (long) b.tile * b.tb.steps().size() + st.s() + 1;
                        }
                        if (++b.step == b.tb.steps().size()) {
                            b.step = 0;
                            b.tile++;
                        }
                        progress = true;
                    }
                }
            }
        }
        StringBuilder stuck = new StringBuilder();
        for (int r = 0; r < n; r++) {
            for (Block b : blocks[r]) {
                if (b.tile < tiles) {
                    MscclProgram.Step st = b.tb.steps().get(b.step);
                    stuck.append(" rank ").append(r).append(" tb ").append(b.tb.id()).append(" step ").append(st.s())
                            .append(" (").append(st.type().xml()).append(", tile ").append(b.tile).append(" of ")
                            .append(tiles).append(") waits for ").append(b.waitingFor(blocks[r], slots)).append(';');
                }
            }
        }
        if (!stuck.isEmpty()) {
            throw new IllegalStateException(program + " cannot finish (a dependency cycle), so nothing was enqueued:"
                    + stuck);
        }
        return mine;
    }

    /** A thread block as counters. */
    private static final class Block {
        final MscclProgram.ThreadBlock tb;
        final int tiles;
        Block receiver;
        Block sender;
        int step;
        int tile;
        long recvSeq;
        long sendSeq;
        long delivered;
        long acked;
        long semaphore;

        Block(MscclProgram.ThreadBlock tb, int tiles) {
            this.tb = tb;
            this.tiles = tb.steps().isEmpty() ? 0 : tiles;
        }

        boolean canRun(Block[] gpu, int slots) {
            return tile < tiles && waitingFor(gpu, slots) == null;
        }

        /** @return what the next step waits for, or null if it can run */
        String waitingFor(Block[] gpu, int slots) {
            MscclProgram.Step st = tb.steps().get(step);
            if (st.depid() >= 0) {
                long need = (long) tile * gpu[st.depid()].tb.steps().size() + st.deps() + 1;
                if (gpu[st.depid()].semaphore < need) {
                    return "tb " + st.depid() + " step " + st.deps() + " (its semaphore to reach " + need + ")";
                }
            }
            if (st.type().receives() && delivered < recvSeq + 1) {
                return "message " + (recvSeq + 1) + " from rank " + tb.recv() + " on channel " + tb.chan();
            }
            if (st.type().sends() && sendSeq + 1 > slots && acked < sendSeq + 1 - slots) {
                return "a free slot to rank " + tb.send() + " on channel " + tb.chan();
            }
            return null;
        }
    }
}

package dev.gdasync.apps.hpgmg;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.BiFunction;

/**
 * One of upstream's communicator programs (an exchange, a restriction or an interpolation between two
 * levels, or a reduction step): per peer rank one message to send, filled by pack blocks, and one to
 * receive, emptied by unpack blocks, plus the local blocks that need no message. Both sides of a message
 * list its blocks in the same order, so buffer offsets agree without negotiation.
 */
final class CommPlan {
    /** One message to or from one peer, its staging array and the blocks that fill or empty it. */
    static final class Message {
        final int peer;
        final double[] buf;
        final Block[] blocks;
        /** What the transport keeps for this message (its registered memory), made on first use. */
        Object state;

        Message(int peer, double[] buf, Block[] blocks) {
            this.peer = peer;
            this.buf = buf;
            this.blocks = blocks;
        }

        int count() {
            return buf.length;
        }
    }

    final String name;
    final Message[] sends;
    final Message[] recvs;
    final Block[] local;

    CommPlan(String name, Message[] sends, Message[] recvs, Block[] local) {
        this.name = name;
        this.sends = sends;
        this.recvs = recvs;
        this.local = local;
    }

    boolean remote() {
        return sends.length > 0 || recvs.length > 0;
    }

    /** Collects blocks per peer, in call order, then lays out the buffers. */
    static final class Builder {
        private final String name;
        private final TreeMap<Integer, List<Pending>> sends = new TreeMap<>();
        private final TreeMap<Integer, List<Pending>> recvs = new TreeMap<>();
        private final List<Block> local = new ArrayList<>();

        Builder(String name) {
            this.name = name;
        }

        private record Pending(int size, BiFunction<double[], Integer, Block> make) {
        }

        /** A block that packs {@code size} doubles into the message to {@code peer}. */
        void send(int peer, int size, BiFunction<double[], Integer, Block> make) {
            sends.computeIfAbsent(peer, p -> new ArrayList<>()).add(new Pending(size, make));
        }

        /** A block that unpacks {@code size} doubles of the message from {@code peer}. */
        void recv(int peer, int size, BiFunction<double[], Integer, Block> make) {
            recvs.computeIfAbsent(peer, p -> new ArrayList<>()).add(new Pending(size, make));
        }

        void local(Block b) {
            local.add(b);
        }

        CommPlan build() {
            return new CommPlan(name, messages(sends), messages(recvs), local.toArray(Block[]::new));
        }

        private static Message[] messages(TreeMap<Integer, List<Pending>> byPeer) {
            List<Message> out = new ArrayList<>();
            byPeer.forEach((peer, list) -> {
                int total = 0;
                for (Pending p : list) {
                    total += p.size;
                }
                double[] buf = new double[total];
                Block[] blocks = new Block[list.size()];
                int off = 0;
                for (int i = 0; i < blocks.length; i++) {
                    blocks[i] = list.get(i).make.apply(buf, off);
                    off += list.get(i).size;
                }
                out.add(new Message(peer, buf, blocks));
            });
            return out.toArray(Message[]::new);
        }
    }
}

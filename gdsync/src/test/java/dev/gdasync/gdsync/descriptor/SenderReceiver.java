package dev.gdasync.gdsync.descriptor;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.function.Supplier;

/**
 * Test fixture: two software NICs in this JVM with one connected queue pair each, for tests that need
 * real prepared sends and waits. The sender's message i is the 8 bytes at offset {@code 8 * i} of its
 * region; the receiver's receive i lands at offset {@code 8 * i} of its region.
 */
public final class SenderReceiver implements AutoCloseable {
    /** Slots for messages (and receive buffers). */
    public static final int SLOTS = 64;

    public final Nic senderNic;
    public final Nic receiverNic;
    public final Region senderRegion;
    public final Region receiverRegion;
    public final MemoryRegion senderMr;
    public final MemoryRegion receiverMr;
    public final QueuePair sender;
    public final QueuePair receiver;
    private int recvsPosted;

    /**
     * @param base  a temporary directory for the shared-memory files
     * @param jobId the job
     */
    public SenderReceiver(Path base, String jobId) {
        this(() -> SoftwareNic.open(SwNicConfig.defaults().withShmBase(base).withJobId(jobId)));
    }

    /**
     * Two NICs of any provider.
     *
     * @param nics opens one NIC (called twice)
     */
    public SenderReceiver(Supplier<Nic> nics) {
        senderNic = nics.get();
        receiverNic = nics.get();
        senderRegion = senderNic.allocateHost(8 * SLOTS);
        receiverRegion = receiverNic.allocateHost(8 * SLOTS);
        senderMr = senderNic.register(senderRegion, Access.ALL);
        receiverMr = receiverNic.register(receiverRegion, Access.ALL);
        sender = senderNic.createQueuePair(QueuePairConfig.DEFAULT);
        receiver = receiverNic.createQueuePair(QueuePairConfig.DEFAULT);
        sender.connect(receiver.endpoint());
        receiver.connect(sender.endpoint());
        for (int i = 0; i < SLOTS; i++) {
            senderRegion.segment().set(ValueLayout.JAVA_LONG, 8L * i, payload(i));
        }
    }

    /**
     * @param i a message number
     * @return the 8-byte payload of message i
     */
    public static long payload(int i) {
        return 0x0102_0304_0000_0000L | (i + 1);
    }

    /**
     * Posts the receiver's next {@code n} receives, each of 8 bytes at its own slot, with wrId = slot.
     *
     * @param n how many
     */
    public void postRecvs(int n) {
        for (int k = 0; k < n; k++, recvsPosted++) {
            receiver.postRecv(new RecvWorkRequest().wrId(recvsPosted).sge(receiverMr, 8L * recvsPosted, 8));
        }
    }

    /**
     * Prepares the sender's message i (8 bytes from slot i, wrId = 1000 + i).
     *
     * @param i the message number
     * @return the prepared send
     */
    public SendRequest prepareSend(int i) {
        return sender.prepareSend(new SendWorkRequest().wrId(1000 + i).sge(senderMr, 8L * i, 8));
    }

    /** @return the 8 bytes received in receive slot i */
    public long received(int slot) {
        return receiverRegion.segment().get(ValueLayout.JAVA_LONG, 8L * slot);
    }

    /**
     * Polls a completion queue until it returns one or a deadline passes.
     *
     * @param cq     the queue
     * @param out    filled with the completion
     * @param millis the deadline
     * @return whether a completion was reaped
     */
    public static boolean pollWithin(CompletionQueue cq, Completion out, long millis) {
        long end = System.nanoTime() + millis * 1_000_000;
        do {
            if (cq.poll(out) == 1) {
                return true;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        } while (System.nanoTime() - end < 0);
        return false;
    }

    /**
     * Polls a condition until it holds or a deadline passes (for state another thread, such as the
     * NIC's agent, may publish a moment later).
     *
     * @param condition the condition
     * @param millis    the deadline
     * @return whether it held in time
     */
    public static boolean within(java.util.function.BooleanSupplier condition, long millis) {
        long end = System.nanoTime() + millis * 1_000_000;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end >= 0) {
                return false;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        }
        return true;
    }

    @Override
    public void close() {
        try {
            senderNic.close();
        } finally {
            receiverNic.close();
        }
    }
}

package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memop.WaitTally;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A queue pair's live counts, which its provider keeps and {@link #snapshot()} turns into {@link TrafficCounters}.
 *
 * <p>Each kind of count has one writer at a time: {@link #requestDone}, {@link #rnrRetry} and {@link #doorbell} the
 * queue pair's executor (under its execution lock, on the software NIC) or its polling thread (mlx5);
 * {@link #received} the thread that polls the receive completion queue; the two {@link WaitTally}s any host executor.
 * A count is a plain add with an opaque store, so counting costs no atomic instruction; readers on other threads
 * (a snapshot, JMX) see each count whole and never going back.
 */
public final class TrafficMeter {
    private static final VarHandle WORK;
    private static final VarHandle SENT;
    private static final VarHandle RECEIVES;
    private static final VarHandle RECEIVED;
    private static final VarHandle RNR;
    private static final VarHandle INLINE;
    private static final VarHandle AGENT;
    private static final CompletionStatus[] STATUSES = CompletionStatus.values();

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WORK = l.findVarHandle(TrafficMeter.class, "workRequests", long.class);
            SENT = l.findVarHandle(TrafficMeter.class, "bytesSent", long.class);
            RECEIVES = l.findVarHandle(TrafficMeter.class, "receives", long.class);
            RECEIVED = l.findVarHandle(TrafficMeter.class, "bytesReceived", long.class);
            RNR = l.findVarHandle(TrafficMeter.class, "rnrRetries", long.class);
            INLINE = l.findVarHandle(TrafficMeter.class, "doorbellsInline", long.class);
            AGENT = l.findVarHandle(TrafficMeter.class, "doorbellsAgent", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused")
    private long workRequests;
    @SuppressWarnings("unused")
    private long bytesSent;
    @SuppressWarnings("unused")
    private long receives;
    @SuppressWarnings("unused")
    private long bytesReceived;
    @SuppressWarnings("unused")
    private long rnrRetries;
    @SuppressWarnings("unused")
    private long doorbellsInline;
    @SuppressWarnings("unused")
    private long doorbellsAgent;
    /** Errors by status ordinal: rare, so atomic. */
    private final AtomicLongArray errors = new AtomicLongArray(STATUSES.length);
    private final WaitTally sendWaits;
    private final WaitTally recvWaits;

    /**
     * @param queuePair          the queue pair's name for its completion queues, such as "QP 3"
     * @param token              its identity across processes, or 0
     * @param valuesCountEntries whether its prepared waits await an entry's index plus one (see {@link WaitTally})
     * @throws NullPointerException if the name is null
     */
    public TrafficMeter(String queuePair, long token, boolean valuesCountEntries) {
        Objects.requireNonNull(queuePair, "queuePair must not be null");
        this.sendWaits = new WaitTally("send CQ of " + queuePair, token, valuesCountEntries);
        this.recvWaits = new WaitTally("recv CQ of " + queuePair, token, valuesCountEntries);
    }

    // Each count is bumped through its own constant VarHandle: a handle passed as an argument to a shared helper is
    // not a constant to the JIT, which then calls the handle's generic code (and a method handle linker) per count.

    /**
     * A send-queue work request completed.
     *
     * @param bytes  its byte count (counted when it succeeded)
     * @param status how it ended
     */
    public void requestDone(int bytes, CompletionStatus status) {
        WORK.setOpaque(this, (long) WORK.getOpaque(this) + 1);
        if (status == CompletionStatus.SUCCESS) {
            SENT.setOpaque(this, (long) SENT.getOpaque(this) + bytes);
        } else {
            errors.incrementAndGet(status.ordinal());
        }
    }

    /**
     * A receive completion was reaped.
     *
     * @param bytes  its byte count (counted when it succeeded)
     * @param status how it ended
     */
    public void received(int bytes, CompletionStatus status) {
        RECEIVES.setOpaque(this, (long) RECEIVES.getOpaque(this) + 1);
        if (status == CompletionStatus.SUCCESS) {
            RECEIVED.setOpaque(this, (long) RECEIVED.getOpaque(this) + bytes);
        } else {
            errors.incrementAndGet(status.ordinal());
        }
    }

    /** A send found no receive posted at the peer and will be tried again. */
    public void rnrRetry() {
        RNR.setOpaque(this, (long) RNR.getOpaque(this) + 1);
    }

    /**
     * Rung work was noticed and run.
     *
     * @param byAgent whether the NIC's agent ran it (else the thread that rang)
     */
    public void doorbell(boolean byAgent) {
        if (byAgent) {
            AGENT.setOpaque(this, (long) AGENT.getOpaque(this) + 1);
        } else {
            INLINE.setOpaque(this, (long) INLINE.getOpaque(this) + 1);
        }
    }

    /** @return where host executors count the waits for the send completion queue */
    public WaitTally sendWaits() {
        return sendWaits;
    }

    /** @return where host executors count the waits for the receive completion queue */
    public WaitTally recvWaits() {
        return recvWaits;
    }

    /** @return the counts now */
    public TrafficCounters snapshot() {
        Map<CompletionStatus, Long> e = new EnumMap<>(CompletionStatus.class);
        for (int i = 0; i < STATUSES.length; i++) {
            long n = errors.get(i);
            if (n != 0) {
                e.put(STATUSES[i], n);
            }
        }
        return new TrafficCounters((long) WORK.getOpaque(this), (long) SENT.getOpaque(this), (long) RECEIVES.getOpaque(this),
                (long) RECEIVED.getOpaque(this), e, (long) RNR.getOpaque(this), (long) INLINE.getOpaque(this),
                (long) AGENT.getOpaque(this), sendWaits.waits() + recvWaits.waits(),
                sendWaits.waitedNanos() + recvWaits.waitedNanos());
    }
}

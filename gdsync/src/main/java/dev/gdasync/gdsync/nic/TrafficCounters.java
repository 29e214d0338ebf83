package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memop.WaitTally;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What a queue pair, or a whole NIC, has done so far: a snapshot taken by {@link QueuePair#counters()} or
 * {@link Nic#counters()}. Counts only grow, so the difference of two snapshots ({@link #minus}) is what happened in
 * between.
 *
 * <p>Where each count is taken differs by provider and is said in docs/observability.md; in short, on the software NIC
 * work requests, their bytes and their errors are counted where they execute, receives where the CPU reaps them; on
 * mlx5 both where the CPU reaps their completions.
 *
 * @param workRequests    send-queue work requests completed (SEND, RDMA WRITE and READ, atomics), failed ones included
 * @param bytesSent       the bytes of those that succeeded
 * @param receives        receive completions reaped, failed ones included
 * @param bytesReceived   the bytes of those that succeeded
 * @param errors          completions that failed, by status (send and receive side together); statuses never seen are
 *                        absent
 * @param rnrRetries      times a send found no receive posted at the peer and was tried again
 * @param doorbellsInline doorbells whose work ran on the thread that rang (a CPU post, a host stream, a host thread
 *                        playing a kernel)
 * @param doorbellsAgent  doorbells whose work the NIC's agent noticed and ran (rings by plain stores)
 * @param streamWaits     waits for this queue pair's completions run by host executors (host streams, CPU descriptor
 *                        posts); GPU streams and kernels are not counted
 * @param streamWaitNanos the time those waits waited, in nanoseconds; 0 unless waits are timed
 *                        ({@link WaitTally#timeWaits(boolean)})
 */
public record TrafficCounters(long workRequests, long bytesSent, long receives, long bytesReceived,
                              Map<CompletionStatus, Long> errors, long rnrRetries, long doorbellsInline, long doorbellsAgent,
                              long streamWaits, long streamWaitNanos) {
    /** Nothing done. */
    public static final TrafficCounters NONE = new TrafficCounters(0, 0, 0, 0, Map.of(), 0, 0, 0, 0, 0);

    /**
     * @throws NullPointerException if the errors are null
     */
    public TrafficCounters {
        Objects.requireNonNull(errors, "errors must not be null");
        EnumMap<CompletionStatus, Long> copy = new EnumMap<>(CompletionStatus.class);
        errors.forEach((k, v) -> {
            if (v != 0) {
                copy.put(k, v);
            }
        });
        errors = Collections.unmodifiableMap(copy);
    }

    /** @return every error, whatever its status */
    public long errorCount() {
        long n = 0;
        for (long v : errors.values()) {
            n += v;
        }
        return n;
    }

    /** @return doorbells noticed, inline and by the agent */
    public long doorbells() {
        return doorbellsInline + doorbellsAgent;
    }

    /**
     * @param other more counts
     * @return the sum
     * @throws NullPointerException if the other is null
     */
    public TrafficCounters plus(TrafficCounters other) {
        Objects.requireNonNull(other, "other must not be null");
        return combine(other, 1);
    }

    /**
     * @param earlier an earlier snapshot of the same queue pair or NIC
     * @return what happened since
     * @throws NullPointerException if the earlier snapshot is null
     */
    public TrafficCounters minus(TrafficCounters earlier) {
        Objects.requireNonNull(earlier, "earlier must not be null");
        return combine(earlier, -1);
    }

    private TrafficCounters combine(TrafficCounters o, long sign) {
        EnumMap<CompletionStatus, Long> e = new EnumMap<>(CompletionStatus.class);
        e.putAll(errors);
        o.errors.forEach((k, v) -> e.merge(k, sign * v, Long::sum));
        return new TrafficCounters(workRequests + sign * o.workRequests, bytesSent + sign * o.bytesSent,
                receives + sign * o.receives, bytesReceived + sign * o.bytesReceived, e, rnrRetries + sign * o.rnrRetries,
                doorbellsInline + sign * o.doorbellsInline, doorbellsAgent + sign * o.doorbellsAgent,
                streamWaits + sign * o.streamWaits, streamWaitNanos + sign * o.streamWaitNanos);
    }

    /** @return the counts on one line, as {@code pingpong --stats} prints them */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        s.append(workRequests).append(" work requests (").append(bytesSent).append(" B), ")
                .append(receives).append(" receives (").append(bytesReceived).append(" B), doorbells ")
                .append(doorbellsInline).append(" inline / ").append(doorbellsAgent).append(" agent, ")
                .append(rnrRetries).append(" RNR retries, ").append(streamWaits).append(" stream waits");
        if (streamWaits > 0 && streamWaitNanos == 0 && !WaitTally.timesWaits()) {
            s.append(" (not timed: -Dgdasync.counters.waitTime=true)");
        } else if (streamWaits > 0) {
            s.append(String.format(Locale.ROOT, " (%.3f ms, %.3f us each)", streamWaitNanos / 1e6,
                    streamWaitNanos / 1e3 / streamWaits));
        }
        s.append(", errors ").append(errors.isEmpty() ? "none" : errors.toString());
        return s.toString();
    }
}

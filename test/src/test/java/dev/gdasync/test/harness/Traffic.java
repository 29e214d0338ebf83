package dev.gdasync.test.harness;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Streams of sequence-numbered SENDs over one queue pair, driven by one thread with the CPU API.
 *
 * <p>Message {@code seq} is {@link Payloads#message}{@code (seq, }{@link Payloads#messageSize}{@code )}.
 * The sink keeps the receive queue full, reaps receive completions in order, checks every one
 * (status, opcode, wr id, length, every payload byte) and reposts. The source posts as long as the send
 * queue has room, writing each payload into a slot that the send queue's depth guarantees is free, and
 * checks that exactly its signaled sends complete, in order. Both stop at the first error completion,
 * then reap what is still outstanding, so that a test can check how a fault ended every request.
 */
public final class Traffic {
    private static final BackoffPolicy IDLE = new BackoffPolicy(200, 50, 20_000, 500_000);

    private Traffic() {
    }

    /**
     * How a stream ended.
     *
     * @param ok                messages completed successfully and verified (source: known executed)
     * @param errors            error completions
     * @param firstErrorStatus  status of the first error completion, or null
     * @param firstErrorDetail  its detail, or null
     * @param outstanding       requests posted whose completions never came
     * @param failure           why the stream is wrong (bad data, wrong order, timeout), or null
     */
    public record Result(long ok, long errors, CompletionStatus firstErrorStatus, ErrorDetail firstErrorDetail,
                         long outstanding, String failure) {
        String encode() {
            return Wire.hex(ok) + " " + Wire.hex(errors) + " " + (firstErrorStatus == null ? "-" : firstErrorStatus)
                    + " " + (firstErrorDetail == null ? "-" : firstErrorDetail) + " " + Wire.hex(outstanding) + " "
                    + (failure == null ? "-" : failure.replace('\n', ' '));
        }

        static Result decode(String s) {
            String[] f = s.split(" ", 6);
            return new Result(Wire.num(f[0]), Wire.num(f[1]), f[2].equals("-") ? null : CompletionStatus.valueOf(f[2]),
                    f[3].equals("-") ? null : ErrorDetail.valueOf(f[3]), Wire.num(f[4]), f[5].equals("-") ? null : f[5]);
        }
    }

    /**
     * Receives {@code count} messages in order.
     *
     * @param qp       the queue pair (this thread drives it alone)
     * @param mr       receive buffers: recvDepth slots of {@code maxSize} bytes, LOCAL_WRITE
     * @param count    messages to receive ({@link Long#MAX_VALUE}: until an error)
     * @param minSize  smallest message
     * @param maxSize  largest message
     * @param timeout  how long the whole stream may take
     * @param cancel   polled; true ends the stream (with a failure)
     * @param progress set to the number of verified messages as they arrive (may be null)
     * @return how it ended
     */
    public static Result sink(QueuePair qp, MemoryRegion mr, long count, int minSize, int maxSize, Duration timeout,
                              BooleanSupplier cancel, AtomicLong progress) {
        int depth = qp.config().recvDepth();
        if (mr.length() < (long) depth * maxSize) {
            throw new IllegalArgumentException("sink buffers need " + depth + " x " + maxSize + " bytes, " + mr + " has " + mr.length());
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        RecvWorkRequest rwr = new RecvWorkRequest();
        Completion c = new Completion();
        BackoffIdler idler = new BackoffIdler(IDLE);
        MemorySegment seg = mr.segment();
        long posted = 0;
        long reaped = 0;
        long ok = 0;
        long errors = 0;
        CompletionStatus firstStatus = null;
        ErrorDetail firstDetail = null;
        boolean stop = false;
        for (; posted < Math.min(depth, count); posted++) {
            qp.postRecv(rwr.reset().wrId(posted).sge(mr, (posted % depth) * maxSize, maxSize));
        }
        while (reaped < posted) {
            if (cancel.getAsBoolean()) {
                return new Result(ok, errors, firstStatus, firstDetail, posted - reaped, "cancelled");
            }
            if (System.nanoTime() - deadline > 0) {
                return new Result(ok, errors, firstStatus, firstDetail, posted - reaped,
                        "timed out after " + timeout.toMillis() + " ms: " + ok + " of " + count + " messages received, "
                                + (posted - reaped) + " receives outstanding on " + qp);
            }
            if (qp.recvCq().poll(c) == 0) {
                idler.idle();
                continue;
            }
            idler.reset();
            long r = reaped++;
            if (!c.isSuccess()) {
                errors++;
                if (firstStatus == null) {
                    firstStatus = c.status();
                    firstDetail = c.detail();
                }
                stop = true;
                continue;
            }
            if (stop) {
                return new Result(ok, errors, firstStatus, firstDetail, posted - reaped,
                        "receive " + r + " succeeded after an error completion: " + c);
            }
            int size = Payloads.messageSize(r, minSize, maxSize);
            if (c.wrId() != r || c.opcode() != CompletionOpcode.RECV || c.byteLength() != size) {
                return new Result(ok, errors, null, null, posted - reaped, "receive " + r + ": expected wrId " + r
                        + ", opcode RECV, " + size + " bytes; got " + c);
            }
            long off = (r % depth) * maxSize;
            byte[] expected = Payloads.message(r, size);
            long bad = Payloads.mismatch(seg, off, expected);
            if (bad >= 0) {
                long seqSeen = seg.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
                return new Result(ok, errors, null, null, posted - reaped, "message " + r + " (" + size
                        + " bytes) differs at byte " + bad + " (sequence number in the buffer: " + seqSeen + ")");
            }
            ok++;
            if (progress != null) {
                progress.set(ok);
            }
            if (posted < count) {
                qp.postRecv(rwr.reset().wrId(posted).sge(mr, (posted % depth) * maxSize, maxSize));
                posted++;
            }
        }
        return new Result(ok, errors, firstStatus, firstDetail, 0, null);
    }

    /**
     * Sends {@code count} messages in order.
     *
     * @param qp          the queue pair (this thread drives it alone)
     * @param mr          send buffers: sendDepth slots of {@code maxSize} bytes
     * @param count       messages to send ({@link Long#MAX_VALUE}: until an error)
     * @param minSize     smallest message
     * @param maxSize     largest message
     * @param signalEvery every n-th send (and the last) is signaled; 1: all
     * @param timeout     how long the whole stream may take
     * @param cancel      polled; true ends the stream (with a failure)
     * @param progress    set to the number of sends posted (may be null)
     * @return how it ended
     */
    public static Result source(QueuePair qp, MemoryRegion mr, long count, int minSize, int maxSize, int signalEvery,
                                Duration timeout, BooleanSupplier cancel, AtomicLong progress) {
        int depth = qp.config().sendDepth();
        if (mr.length() < (long) depth * maxSize) {
            throw new IllegalArgumentException("source buffers need " + depth + " x " + maxSize + " bytes, " + mr + " has " + mr.length());
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        SendWorkRequest wr = new SendWorkRequest();
        Completion c = new Completion();
        BackoffIdler idler = new BackoffIdler(IDLE);
        MemorySegment seg = mr.segment();
        ArrayDeque<Long> signaled = new ArrayDeque<>();
        long next = 0;
        long ok = 0;
        long errors = 0;
        CompletionStatus firstStatus = null;
        ErrorDetail firstDetail = null;
        boolean stop = false;
        for (;;) {
            if (cancel.getAsBoolean()) {
                return new Result(ok, errors, firstStatus, firstDetail, next - ok, "cancelled");
            }
            if (System.nanoTime() - deadline > 0) {
                return new Result(ok, errors, firstStatus, firstDetail, next - ok, "timed out after "
                        + timeout.toMillis() + " ms: " + next + " of " + count + " messages posted, " + ok
                        + " known executed, send queue free " + qp.sendQueueFree() + " on " + qp);
            }
            int work = 0;
            while (qp.sendCq().poll(c) == 1) {
                work++;
                if (!c.isSuccess()) {
                    errors++;
                    if (firstStatus == null) {
                        firstStatus = c.status();
                        firstDetail = c.detail();
                    }
                    signaled.remove(c.wrId());
                    stop = true;
                    continue;
                }
                Long expected = signaled.poll();
                if (stop || expected == null || expected != c.wrId()) {
                    return new Result(ok, errors, firstStatus, firstDetail, next - ok, "send completion " + c
                            + " unexpected: the next signaled send is " + expected
                            + (stop ? ", after an error" : "") + " (only signaled sends complete, in order)");
                }
                int size = Payloads.messageSize(c.wrId(), minSize, maxSize);
                if (c.opcode() != CompletionOpcode.SEND || c.byteLength() != size) {
                    return new Result(ok, errors, null, null, next - ok, "send completion " + c + ": expected opcode SEND, "
                            + size + " bytes");
                }
                ok = c.wrId() + 1;
            }
            if (stop) {
                if (qp.sendQueueFree() == depth) {
                    // Everything was executed or flushed; take the last completions and end.
                    while (qp.sendCq().poll(c) == 1) {
                        errors += c.isSuccess() ? 0 : 1;
                    }
                    return new Result(ok, errors, firstStatus, firstDetail, signaled.size(), null);
                }
            } else if (next < count) {
                if (qp.sendQueueFree() > 0) {
                    // The WQE that used this slot (next - depth) has been executed: the slot is free.
                    int size = Payloads.messageSize(next, minSize, maxSize);
                    long off = (next % depth) * maxSize;
                    MemorySegment.copy(Payloads.message(next, size), 0, seg, ValueLayout.JAVA_BYTE, off, size);
                    boolean sig = signalEvery <= 1 || next % signalEvery == signalEvery - 1 || next == count - 1;
                    wr.reset().opcode(Opcode.SEND).wrId(next).flags(sig ? SendFlags.SIGNALED : 0).sge(mr, off, size);
                    try {
                        qp.postSend(wr);
                        if (sig) {
                            signaled.add(next);
                        }
                        next++;
                        if (progress != null) {
                            progress.set(next);
                        }
                        work++;
                    } catch (QueueFullException e) {
                        // the send CQ is full: reap first
                    }
                }
            } else if (signaled.isEmpty()) {
                return new Result(next, errors, firstStatus, firstDetail, 0, null);
            }
            idler.idle(work);
        }
    }
}

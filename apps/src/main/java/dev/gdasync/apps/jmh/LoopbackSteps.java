package dev.gdasync.apps.jmh;

import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One small message's path on one thread, both ends in this JVM, repeated N times: the subject of instruction counts
 * ({@code valgrind --tool=callgrind}, run with two values of N: the difference over the difference in N is the
 * instructions of one message, start-up and JIT compilation cancelled out). One thread and no other core means no
 * waiting and no cache-line transfer: what is counted is the CPU work of each layer alone.
 *
 * <pre>
 *   java ... dev.gdasync.apps.jmh.LoopbackSteps nic|libmp BYTES N
 * </pre>
 * <ul>
 * <li>{@code nic}: the software NIC: post a receive, post a send (work request written, executed inline: receive
 *     claimed, keys and bounds checked, payload copied, receive CQE and send CQE written), poll both CQs (reaped);</li>
 * <li>{@code libmp}: the same through libmp's {@code irecv}, {@code isend}, {@code wait}, {@code wait}: the
 *     nic steps plus request bookkeeping.</li>
 * </ul>
 * It also prints, over the second half of the loop (after the JIT has compiled the path), the time per message
 * ({@code System.nanoTime}, and the thread's CPU time, which leaves out the time other processes had the CPU:
 * compare two builds only side by side, in the same minute) and the bytes the thread
 * allocated per message, read with {@code ThreadMXBean.getThreadAllocatedBytes}: exact, so repeatable on a busy
 * machine.
 * Figures and method: docs/bench/c-peers.md.
 */
public final class LoopbackSteps {
    private LoopbackSteps() {
    }

    /**
     * @param args {@code nic|libmp BYTES N}
     * @throws Exception when a NIC or libmp call fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 3 || !List.of("nic", "libmp").contains(args[0])) {
            System.err.println("usage: LoopbackSteps nic|libmp BYTES N");
            System.exit(2);
        }
        int bytes = Integer.parseInt(args[1]);
        long n = Long.parseLong(args[2]);
        if (bytes < 1 || bytes > 4096 || n < 1) {
            System.err.println("LoopbackSteps: BYTES is 1..4096, N at least 1");
            System.exit(2);
        }
        AllocationMeter meter = new AllocationMeter(n);
        long check = args[0].equals("nic") ? nic(bytes, n, meter) : libmp(bytes, n, meter);
        System.out.println(args[0] + " " + bytes + " B x " + n + ": done (" + check + "), "
                + String.format("%.1f ns (%.1f ns on the CPU) and %.1f bytes allocated per message over the last %d messages",
                meter.nanosPerMessage(), meter.cpuNanosPerMessage(), meter.perMessage(), meter.measured()));
    }

    private static long nic(int bytes, long n, AllocationMeter meter) {
        SwNicConfig cfg = SwNicConfig.defaults().withJobId("steps-" + ProcessHandle.current().pid());
        try (SoftwareNic a = SoftwareNic.open(cfg); SoftwareNic b = SoftwareNic.open(cfg)) {
            HostRegion ra = a.allocateHost(8192);
            HostRegion rb = b.allocateHost(8192);
            MemoryRegion ma = a.register(ra, Access.ALL);
            MemoryRegion mb = b.register(rb, Access.ALL);
            QueuePair qa = a.createQueuePair(new QueuePairConfig(1024, 1024, 2048));
            QueuePair qb = b.createQueuePair(new QueuePairConfig(1024, 1024, 2048));
            qa.connect(qb.endpoint());
            qb.connect(qa.endpoint());
            RecvWorkRequest recv = new RecvWorkRequest().sge(mb, 0, bytes);
            SendWorkRequest send = new SendWorkRequest().sge(ma, 0, bytes);
            Completion c = new Completion();
            long sum = 0;
            for (long i = 0; i < n; i++) {
                meter.at(i);
                qb.postRecv(recv);
                qa.postSend(send);
                while (qb.recvCq().poll(c) == 0) {
                    Thread.onSpinWait();
                }
                sum += c.byteLength();
                while (qa.sendCq().poll(c) == 0) {
                    Thread.onSpinWait();
                }
            }
            meter.end();
            return sum;
        }
    }

    private static long libmp(int bytes, long n, AllocationMeter meter) throws Exception {
        List<Bootstrap> boots = LocalBootstrap.group(2);
        MpConfig config = MpConfig.defaults().withQueuePairs(new QueuePairConfig(1024, 1024, 2048));
        CompletableFuture<Mp> second = CompletableFuture.supplyAsync(() -> Mp.init(boots.get(1), config));
        Mp a = Mp.init(boots.get(0), config);
        Mp b = second.get();
        MemorySegment ma = a.allocate(8192);
        MemorySegment mb = b.allocate(8192);
        MpRegistration ra = a.register(ma);
        MpRegistration rb = b.register(mb);
        MemorySegment out = ma.asSlice(0, bytes);
        MemorySegment in = mb.asSlice(0, bytes);
        long sum = 0;
        for (long i = 0; i < n; i++) {
            meter.at(i);
            MpRequest r = b.irecv(in, 0, rb);
            MpRequest s = a.isend(out, 1, ra);
            a.wait(s);
            b.wait(r);
            sum += r.byteCount();
        }
        meter.end();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(b::close);
        a.close();
        closing.get();
        return sum;
    }

    /** The calling thread's allocated bytes and the time from the loop's middle iteration to its end. */
    private static final class AllocationMeter {
        private static final com.sun.management.ThreadMXBean THREADS =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        private final long from;
        private final long measured;
        private long start;
        private long allocated;
        private long startNanos;
        private long nanos;
        private long startCpu;
        private long cpuNanos;

        AllocationMeter(long n) {
            this.from = n / 2;
            this.measured = n - from;
        }

        void at(long i) {
            if (i == from) {
                start = THREADS.getCurrentThreadAllocatedBytes();
                startNanos = System.nanoTime();
                startCpu = THREADS.getCurrentThreadCpuTime();
            }
        }

        void end() {
            nanos = System.nanoTime() - startNanos;
            cpuNanos = THREADS.getCurrentThreadCpuTime() - startCpu;
            allocated = THREADS.getCurrentThreadAllocatedBytes() - start;
        }

        long measured() {
            return measured;
        }

        double nanosPerMessage() {
            return (double) nanos / measured;
        }

        double cpuNanosPerMessage() {
            return (double) cpuNanos / measured;
        }

        double perMessage() {
            return (double) allocated / measured;
        }
    }
}

package dev.gdasync.apps.jmh;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.Descriptors;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Single-thread costs of the software NIC's calls, between two NICs in one JVM (no cross-core traffic):
 * what a CPU pays per post, prepare and poll. The two-process latencies are in the gdsync ping-pong.
 * Run with {@code scripts/bench jmh SoftwareNic}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SoftwareNicBenchmarks {
    private SoftwareNic a;
    private SoftwareNic b;
    private QueuePair qa;
    private QueuePair qb;
    private final RecvWorkRequest recv = new RecvWorkRequest();
    private final SendWorkRequest send = new SendWorkRequest();
    private final Completion completion = new Completion();
    private final WaitPolicy policy = WaitPolicy.defaults();

    /** Opens two NICs and connects a queue pair between them. */
    @Setup(Level.Trial)
    public void open() {
        SwNicConfig cfg = SwNicConfig.defaults().withJobId("jmh-" + ProcessHandle.current().pid());
        a = SoftwareNic.open(cfg);
        b = SoftwareNic.open(cfg);
        HostRegion ra = a.allocateHost(8192);
        HostRegion rb = b.allocateHost(8192);
        MemoryRegion ma = a.register(ra, Access.ALL);
        MemoryRegion mb = b.register(rb, Access.ALL);
        qa = a.createQueuePair(new QueuePairConfig(1024, 1024, 2048));
        qb = b.createQueuePair(new QueuePairConfig(1024, 1024, 2048));
        qa.connect(qb.endpoint());
        qb.connect(qa.endpoint());
        recv.sge(mb, 0, 64);
        send.sge(ma, 0, 8);
    }

    /** Closes both NICs. */
    @TearDown(Level.Trial)
    public void close() {
        a.close();
        b.close();
    }

    /**
     * A CPU-rung 8-byte send executed inline, its receive, and both polls.
     *
     * @return a completion field, so the work is not eliminated
     */
    @Benchmark
    public long cpuSendRecvPoll() {
        qb.postRecv(recv);
        qa.postSend(send);
        qb.recvCq().poll(completion);
        qa.sendCq().poll(completion);
        return completion.wrId();
    }

    /**
     * What a CPU prepares per stream-rung send: a receive with its wait, a prepared send, the descriptor
     * post; then the memops run on this thread and the completions are reaped.
     *
     * @return a completion field, so the work is not eliminated
     */
    @Benchmark
    public long preparePostExecuteReap() {
        qb.postRecv(recv);
        WaitRequest wait = qb.prepareWaitCq(qb.recvCq());
        SendRequest s = qa.prepareSend(send);
        MemopBatch batch = Descriptors.post(List.of(new Descriptor.Send(s), new Descriptor.Wait(wait)), Descriptors.CPU);
        HostMemops.execute(batch, policy);
        qb.recvCq().poll(completion);
        qa.sendCq().poll(completion);
        return completion.wrId();
    }
}

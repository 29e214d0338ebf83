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
import dev.gdasync.gdsync.trace.TraceSettings;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.text.ParseException;
import java.util.concurrent.TimeUnit;

/**
 * What gdasync's flight-recorder events cost on a CPU round trip through the software NIC (the host model's path:
 * post a receive, post a send rung inline, executed over shared memory, both CQEs written and reaped: seven event
 * sites), under three recorders: {@code none} (no recording: the events cost their {@code shouldCommit} branch),
 * {@code jdk} (a recording with the JDK's default settings, which leave gdasync's events disabled) and
 * {@code gdasync} (the project's settings: every event recorded). The cost of the events compiled in against a build
 * without them is {@link SoftwareNicBenchmarks#cpuSendRecvPoll} run on both builds (docs/observability.md). Run with
 * {@code scripts/bench jmh EventOverhead}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class EventOverheadBenchmarks {
    /** The recorder running during the measurement. */
    @Param({"none", "jdk", "gdasync"})
    public String recorder;

    private SoftwareNic a;
    private SoftwareNic b;
    private QueuePair qa;
    private QueuePair qb;
    private Recording recording;
    private final RecvWorkRequest recv = new RecvWorkRequest();
    private final SendWorkRequest send = new SendWorkRequest();
    private final Completion completion = new Completion();

    /**
     * Opens two NICs, connects a queue pair between them and starts the recorder.
     *
     * @throws IOException    if the JDK's settings cannot be read
     * @throws ParseException if they cannot be parsed
     */
    @Setup(Level.Trial)
    public void open() throws IOException, ParseException {
        SwNicConfig cfg = SwNicConfig.defaults().withJobId("jmh-events-" + ProcessHandle.current().pid());
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
        recording = switch (recorder) {
            case "none" -> null;
            case "jdk" -> new Recording(Configuration.getConfiguration("default"));
            case "gdasync" -> new Recording(TraceSettings.configuration());
            default -> throw new IllegalArgumentException("recorder " + recorder + ": none, jdk or gdasync");
        };
        if (recording != null) {
            // In memory, bounded: the benchmark is about the commit, not the disk.
            recording.setToDisk(false);
            recording.setMaxSize(64L << 20);
            recording.start();
        }
    }

    /** Stops the recorder and closes both NICs. */
    @TearDown(Level.Trial)
    public void close() {
        if (recording != null) {
            recording.stop();
            recording.close();
        }
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
}

package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.memop.WaitTally;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.NicMBeans;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.TrafficCounters;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.HostStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.MBeanServer;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counters match the operations performed: work requests and their bytes, receives, doorbells by whom, RNR
 * retries, stream waits, errors by status; the NIC's totals keep a closed queue pair's counts; JMX shows the same.
 * {@code Mlx5TrafficCountersTest} runs the same on the mlx5 provider.
 */
public class TrafficCountersTest {
    @TempDir
    protected Path base;
    protected NicPair p;

    /** @return the two connected NICs every test runs between; another provider's test gives its own */
    protected NicPair newPair() {
        return new NicPair(NicPair.config(base), QueuePairConfig.DEFAULT, 1 << 16, Access.ALL, Access.ALL);
    }

    @BeforeEach
    void open() {
        p = newPair();
    }

    @AfterEach
    void close() {
        p.close();
    }

    @Test
    void sendsAndReceivesAreCountedWithTheirBytesAndDoorbells() {
        int[] sizes = {8, 16, 32};
        for (int i = 0; i < sizes.length; i++) {
            p.qb.postRecv(new RecvWorkRequest().wrId(i).sge(p.mb, 1024L * i, 64));
        }
        for (int size : sizes) {
            p.qa.postSend(new SendWorkRequest().sge(p.ma, 0, size));
        }
        for (int i = 0; i < sizes.length; i++) {
            assertTrue(awaitOne(p.qa.sendCq()).isSuccess());
            assertTrue(awaitOne(p.qb.recvCq()).isSuccess());
        }
        TrafficCounters a = p.qa.counters();
        assertEquals(3, a.workRequests(), a.toString());
        assertEquals(56, a.bytesSent(), a.toString());
        assertEquals(0, a.receives(), a.toString());
        // Each post's doorbell is noticed once: inline by the posting thread, or by the agent when that thread was
        // descheduled past the doorbell's grace (a loaded machine), so only the sum is fixed.
        assertEquals(3, a.doorbellsInline() + a.doorbellsAgent(), "every doorbell noticed once: " + a);
        assertEquals(Map.of(), a.errors());
        TrafficCounters b = p.qb.counters();
        assertEquals(3, b.receives(), b.toString());
        assertEquals(56, b.bytesReceived(), b.toString());
        assertEquals(0, b.workRequests(), b.toString());
        assertEquals(a, p.a.counters(), "one queue pair: the NIC's totals are its counts");
    }

    @Test
    void streamWaitsAreCountedWithTheirTimeWhenTimed() throws InterruptedException {
        WaitTally.timeWaits(true);
        try {
            oneStreamWait();
        } finally {
            WaitTally.timeWaits(false);
        }
        TrafficCounters b = p.qb.counters();
        assertEquals(1, b.streamWaits(), b.toString());
        assertTrue(b.streamWaitNanos() > 0, "the wait was posted before the message existed: " + b);
        assertEquals(0, p.qa.counters().streamWaits());
    }

    @Test
    void streamWaitsAreCountedButNotTimedByDefault() throws InterruptedException {
        oneStreamWait();
        TrafficCounters b = p.qb.counters();
        assertEquals(1, b.streamWaits(), b.toString());
        assertEquals(0, b.streamWaitNanos(), b.toString());
        assertTrue(b.toString().contains("1 stream waits (not timed: -Dgdasync.counters.waitTime=true)"), b.toString());
    }

    /**
     * A stream waits for a receive; the message is sent only once the stream has reached the wait and had
     * 20 ms to look (on a loaded machine the stream's thread could otherwise start after the message landed,
     * and the wait would rightly count 0 ns).
     */
    private void oneStreamWait() throws InterruptedException {
        try (HostStream stream = HostStream.create("counted")) {
            p.qb.postRecv(new RecvWorkRequest().sge(p.mb, 0, 64));
            WaitRequest arrived = p.qb.prepareWaitCq(p.qb.recvCq());
            CountDownLatch reached = new CountDownLatch(1);
            stream.launch(reached::countDown);
            stream.post(List.of(new Descriptor.Wait(arrived)));
            assertTrue(reached.await(30, TimeUnit.SECONDS), "the stream never ran its task");
            Thread.sleep(20);
            p.qa.postSend(new SendWorkRequest().sge(p.ma, 0, 8));
            stream.synchronize();
            assertTrue(awaitOne(p.qb.recvCq()).isSuccess());
        }
    }

    @Test
    void aSendBeforeItsReceiveIsRetriedAndCounted() throws InterruptedException {
        p.qa.postSend(new SendWorkRequest().sge(p.ma, 0, 8));
        Thread.sleep(20);
        p.qb.postRecv(new RecvWorkRequest().sge(p.mb, 0, 64));
        assertTrue(awaitOne(p.qa.sendCq()).isSuccess());
        assertTrue(awaitOne(p.qb.recvCq()).isSuccess());
        TrafficCounters a = p.qa.counters();
        assertTrue(a.rnrRetries() >= 1, "the send found no receive at first: " + a);
        assertEquals(1, a.workRequests(), a.toString());
        assertEquals(8, a.bytesSent(), a.toString());
    }

    @Test
    void errorsAreCountedByStatus() {
        p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).wrId(1).sge(p.ma, 0, 8).remote(p.mb.address(), 12345L));
        Completion c = awaitOne(p.qa.sendCq());
        assertEquals(CompletionStatus.REM_ACCESS_ERR, c.status());
        TrafficCounters a = p.qa.counters();
        assertEquals(Map.of(CompletionStatus.REM_ACCESS_ERR, 1L), a.errors(), a.toString());
        assertEquals(1, a.errorCount());
        assertEquals(1, a.workRequests(), a.toString());
        assertEquals(0, a.bytesSent(), "a failed request moves no bytes: " + a);
    }

    @Test
    void theNicKeepsTheCountsOfClosedQueuePairs() {
        p.qb.postRecv(new RecvWorkRequest().sge(p.mb, 0, 64));
        p.qa.postSend(new SendWorkRequest().sge(p.ma, 0, 40));
        assertTrue(awaitOne(p.qa.sendCq()).isSuccess());
        int qpn = p.qa.number();
        assertEquals(Map.of(qpn, p.qa.counters()), p.a.queuePairCounters());
        TrafficCounters before = p.a.counters();
        p.qa.close();
        assertEquals(before, p.a.counters());
        assertEquals(Map.of(), p.a.queuePairCounters());
        assertEquals(1, p.a.counters().workRequests());
    }

    @Test
    void jmxShowsTheNicsCounts() throws Exception {
        // With JMX up when a NIC opens, the NIC registers itself; closing it unregisters.
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        NicPair q = newPair();
        try {
            q.qb.postRecv(new RecvWorkRequest().sge(q.mb, 0, 64));
            q.qa.postSend(new SendWorkRequest().sge(q.ma, 0, 24));
            assertTrue(awaitOne(q.qa.sendCq()).isSuccess());
            CompositeData counters = (CompositeData) server.getAttribute(NicMBeans.nameOf(q.a), "Counters");
            assertEquals(1L, counters.get("workRequests"));
            assertEquals(24L, counters.get("bytesSent"));
            TabularData qps = (TabularData) server.getAttribute(NicMBeans.nameOf(q.a), "QueuePairs");
            assertEquals(1, qps.size());
            assertEquals(q.a.name(), server.getAttribute(NicMBeans.nameOf(q.a), "Name"));
        } finally {
            q.close();
        }
        assertTrue(server.queryNames(NicMBeans.nameOf(q.a), null).isEmpty(), "closing the NIC removes its MXBean");
    }
}

package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Both sides' memory and queue pair. */
final class Side implements AutoCloseable {
    final SoftwareNic nic;
    final HostRegion region;
    final MemoryRegion mr;
    final Map<String, QueuePair> queuePairs = new LinkedHashMap<>();
    final long sendOffset;
    final long recvOffset;
    final SendWorkRequest send = new SendWorkRequest();
    final RecvWorkRequest recv = new RecvWorkRequest();
    final Completion completion = new Completion();

    Side(String jobId, int maxBytes, List<String> rings) {
        nic = SoftwareNic.open(SwNicConfig.defaults().withJobId(jobId));
        sendOffset = 0;
        recvOffset = align(maxBytes);
        region = nic.allocateHost(recvOffset + align(maxBytes));
        mr = nic.register(region, Access.LOCAL_WRITE);
        // One queue pair per ring mode: each mode starts from fresh completion queues.
        for (String ring : rings) {
            queuePairs.put(ring, nic.createQueuePair(new QueuePairConfig(1024, 1024, 2048)));
        }
    }

    QueuePair qp(String ring) {
        return queuePairs.get(ring);
    }

    /** Sends this side's endpoints, one line per ring mode. */
    void sendEndpoints(PrintStream out) {
        for (Map.Entry<String, QueuePair> e : queuePairs.entrySet()) {
            out.println("ENDPOINT " + e.getKey() + " " + e.getValue().endpoint().toHex());
        }
    }

    /** Reads the peer's endpoints and connects each queue pair. */
    void connect(BufferedReader in) throws IOException {
        for (int i = 0; i < queuePairs.size(); i++) {
            String[] f = GdsyncPingPong.readLine(in, "the peer's endpoints").split(" ");
            if (f.length != 3 || !f[0].equals("ENDPOINT") || !queuePairs.containsKey(f[1])) {
                throw new IOException("expected ENDPOINT <ring> <hex> from the peer, got " + String.join(" ", f));
            }
            queuePairs.get(f[1]).connect(Endpoint.fromHex(f[2]));
        }
    }

    private static long align(long v) {
        return (v + 4095) & -4096L;
    }

    void setSize(int bytes) {
        send.reset().wrId(1).sge(mr, sendOffset, bytes);
        recv.reset().wrId(2).sge(mr, recvOffset, bytes);
    }

    /** Busy-polls a completion queue for one completion and checks it succeeded. */
    void awaitOne(CompletionQueue cq) {
        while (cq.poll(completion) == 0) {
            Thread.onSpinWait();
        }
        if (!completion.isSuccess()) {
            throw new IllegalStateException("completion failed: " + completion);
        }
    }

    /** Reaps every completion available on a completion queue. */
    int reap(CompletionQueue cq) {
        int n = 0;
        while (cq.poll(completion) == 1) {
            if (!completion.isSuccess()) {
                throw new IllegalStateException("completion failed: " + completion);
            }
            n++;
        }
        return n;
    }

    @Override
    public void close() {
        nic.close();
    }
}

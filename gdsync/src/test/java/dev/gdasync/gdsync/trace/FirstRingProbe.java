package dev.gdasync.gdsync.trace;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.NicPair;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.nio.file.Path;

/**
 * The first CPU post of a fresh JVM: posts a receive and a send, polls both completion queues once at once, and prints
 * {@code recv=N send=N} (1: the CQE was there, so the send ran inline on this thread) and the queue pair's counts.
 * {@link FirstRingTest} runs it in a fresh JVM, where the event classes are not loaded yet.
 *
 * <p>Argument: a folder for the software NICs' shared memory.
 */
public final class FirstRingProbe {
    private FirstRingProbe() {
    }

    /**
     * @param args the shared-memory folder
     */
    public static void main(String[] args) {
        try (NicPair p = new NicPair(() -> SoftwareNic.open(SwNicConfig.defaults().withShmBase(Path.of(args[0])).withJobId("first")),
                QueuePairConfig.DEFAULT, 4096, Access.ALL, Access.ALL)) {
            Completion c = new Completion();
            p.qb.postRecv(new RecvWorkRequest().sge(p.mb, 0, 64));
            p.qa.postSend(new SendWorkRequest().sge(p.ma, 0, 8));
            int recv = p.qb.recvCq().poll(c);
            int send = p.qa.sendCq().poll(c);
            System.out.println("recv=" + recv + " send=" + send + " " + p.qa.counters());
        }
    }
}

package dev.gdasync.test.faults;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.Peer;
import dev.gdasync.test.harness.Peer.Cq;
import dev.gdasync.test.harness.Peer.Sge;
import dev.gdasync.test.harness.Peer.Wr;
import dev.gdasync.test.harness.RemotePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static dev.gdasync.test.harness.Checks.awaitTrue;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer killed in the middle of copying a message into this process's receive buffer (the shared-memory transport
 * copies on the sender's side: the sender claims the receive, copies, then writes its completion), when this
 * process learns of the death from its job (the bootstrap tells {@code Mp}, which calls
 * {@code QueuePair.abort(JOB_FAILED)}) before its NIC's liveness sweep saw the peer dead. The receive must fail, as
 * every outstanding request does when the queue pair fails; else whoever waits for it waits until its timeout.
 *
 * <p>The fault-injection suite ({@link KillDuringTrafficTest}) found this as a survivor of a 4-rank job whose
 * {@code waitAll} ran 60 s (its wait timeout) for a receive from the killed rank although the job had failed; this
 * test makes the moment deterministic: a 128 MiB message, the kill once its first word landed and before its last,
 * then the abort, with a liveness sweep slow enough (2 s) that the abort comes first, and 10 s (five sweeps) for the
 * receive's completion.
 */
@Timeout(120)
class KilledMidCopyTest {
    private static final int BIG = 128 << 20;

    @TempDir
    Path base;

    @Test
    void aReceiveTheKilledPeerWasFillingFailsWhenTheJobFailureAbortsTheQueuePair() throws Exception {
        String job = jobId("midcopy");
        SwNicConfig cfg = SwNicConfig.defaults().withJobId(job).withShmBase(base).withLivenessInterval(Duration.ofSeconds(2));
        try (RemotePeer victim = RemotePeer.start("victim", job, base);
             LocalPeer me = LocalPeer.open("survivor", cfg)) {
            me.alloc("rx", BIG);
            me.register("rx", "rx", 0, BIG, Access.LOCAL_WRITE);
            victim.alloc("tx", BIG);
            victim.register("tx", "tx", 0, BIG, Access.LOCAL_WRITE);
            victim.set64("tx", 0, 0x5eed_0001L);
            victim.set64("tx", BIG - 8, 0x5eed_0002L);
            Peer.connectPair(victim, "a", me, "a", new QueuePairConfig(4, 4, 8));
            me.postRecv("a", 1, new Sge("rx", 0, BIG));

            // The victim's command thread rings the send and copies; its answer never comes: it is killed mid-copy.
            Thread sender = Thread.ofPlatform().daemon().name("victim-send").start(() -> {
                try {
                    victim.postSend("a", Wr.of(Opcode.SEND, 2).sge("tx", 0, BIG));
                } catch (Throwable expected) {
                    // the victim died while it was copying
                }
            });
            awaitTrue("the victim started copying into this process's receive buffer", Duration.ofSeconds(60),
                    () -> me.get64("rx", 0) != 0);
            victim.kill();
            long lastWord = me.get64("rx", BIG - 8);
            assertEquals(0, lastWord, "the copy ended before the kill: the moment this test needs was missed (rerun)");
            me.qp("a").abort(ErrorDetail.JOB_FAILED); // what Mp does when its bootstrap reports the job failed
            assertEquals(QpState.ERROR, me.status("a").state());

            Peer.Cqe c = me.poll("a", Cq.RECV, Duration.ofSeconds(10));
            assertNotNull(c, "the receive the killed peer had claimed never completed, 10 s after the queue pair was "
                    + "aborted and the peer died (queue pair " + me.status("a") + "): a wait for it runs to its timeout");
            assertEquals(1, c.wrId(), c.toString());
            assertTrue(c.status() != CompletionStatus.SUCCESS, "a half-copied message completed: " + c);
            sender.join(30_000);
        }
    }
}

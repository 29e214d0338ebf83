package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two queue pairs of one NIC connected to each other over UCX: the NIC's worker reaches itself (UCX's self
 * transport may run the receiver's handler within the send). Such sends keep the ordinary downcall, while small
 * sends to other workers skip its thread-state change; this checks that the own-NIC route still moves data and
 * completes both sides in order. (A handler run inside a send of the light kind is unspecified behaviour of the
 * JVM, which a test cannot be relied on to catch: the transport never sends that way to its own worker.)
 */
class UcxOwnNicTest {
    @TempDir
    Path base;

    @BeforeAll
    static void requireUcx() {
        NicPair.assumeUcx();
    }

    @Test
    void queuePairsOfOneNicSendWriteAndAnswerEachOtherOverUcx() {
        try (SoftwareNic nic = SoftwareNic.open(NicPair.config(base).withTransport(Transport.UCX))) {
            Region region = nic.allocateHost(4096);
            MemoryRegion mr = nic.register(region, Access.ALL);
            QueuePair qa = nic.createQueuePair(QueuePairConfig.DEFAULT);
            QueuePair qb = nic.createQueuePair(QueuePairConfig.DEFAULT);
            qa.connect(qb.endpoint());
            qb.connect(qa.endpoint());
            for (int i = 0; i < 20; i++) {
                // A SEND from a to b, then b's reply, each an 8-byte message through the NIC's own worker.
                qb.postRecv(new RecvWorkRequest().wrId(i).sge(mr, 1024, 8));
                region.segment().set(JAVA_LONG, 0, 1000L + i);
                qa.postSend(new SendWorkRequest().wrId(i).sge(mr, 0, 8));
                Completion received = awaitOne(qb.recvCq());
                assertTrue(received.isSuccess(), received.toString());
                assertEquals(i, received.wrId());
                assertEquals(1000L + i, region.segment().get(JAVA_LONG, 1024));
                qa.postRecv(new RecvWorkRequest().wrId(i).sge(mr, 2048, 8));
                region.segment().set(JAVA_LONG, 8, 2000L + i);
                qb.postSend(new SendWorkRequest().wrId(i).sge(mr, 8, 8));
                Completion answered = awaitOne(qa.recvCq());
                assertTrue(answered.isSuccess(), answered.toString());
                assertEquals(2000L + i, region.segment().get(JAVA_LONG, 2048));
                Completion sentA = awaitOne(qa.sendCq());
                assertTrue(sentA.isSuccess(), sentA.toString());
                assertEquals(i, sentA.wrId());
                Completion sentB = awaitOne(qb.sendCq());
                assertTrue(sentB.isSuccess(), sentB.toString());
                assertEquals(i, sentB.wrId());
            }
            // An RDMA WRITE into the NIC's own region through its own worker.
            region.segment().set(JAVA_LONG, 16, 77L);
            qa.postSend(new SendWorkRequest().wrId(99).opcode(Opcode.RDMA_WRITE).sge(mr, 16, 8)
                    .remote(mr.address() + 3072, mr.rkey()));
            Completion written = awaitOne(qa.sendCq());
            assertTrue(written.isSuccess(), written.toString());
            assertEquals(77L, region.segment().get(JAVA_LONG, 3072));
        }
    }
}

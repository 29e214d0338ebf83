package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How the ucx transport acknowledges sends: on the reverse direction's next request when there is one (one UCX
 * message per one-way in a ping-pong), on their own when the receiver sends nothing back.
 */
class UcxAcknowledgementTest {
    private static final int ROUND_TRIPS = 200;

    @TempDir
    Path base;
    private NicPair p;

    @BeforeAll
    static void requireUcx() {
        NicPair.assumeUcx();
    }

    @BeforeEach
    void open() {
        p = new NicPair(NicPair.config(base).withTransport(Transport.UCX), QueuePairConfig.DEFAULT, 4096, Access.ALL,
                Access.ALL);
    }

    @AfterEach
    void close() {
        p.close();
    }

    private long messagesSent() {
        return p.swA().ucx().messagesSent() + p.swB().ucx().messagesSent();
    }

    @Test
    void aPingPongSendsOneMessagePerOneWay() {
        p.qa.postRecv(new RecvWorkRequest().wrId(0).sge(p.ma, 64, 8));
        p.qb.postRecv(new RecvWorkRequest().wrId(0).sge(p.mb, 64, 8));
        // One round trip first: the queue pairs hear from each other (requests before that ask for a reply endpoint).
        pingPong(0);
        long before = messagesSent();
        for (int i = 1; i <= ROUND_TRIPS; i++) {
            pingPong(i);
        }
        long sent = messagesSent() - before;
        // Two requests per round trip, the acknowledgements on them; some on their own (a progress thread that
        // looks while a thread is descheduled between a receive and its reply sends one: on a loaded 2-CPU machine
        // about one round trip in eight). Without piggybacking every one-way would cost two messages: 4 per trip.
        assertTrue(sent >= 2L * ROUND_TRIPS && sent <= 2L * ROUND_TRIPS + ROUND_TRIPS / 2,
                sent + " UCX messages for " + ROUND_TRIPS + " round trips");
    }

    /** Round trip {@code i}: a ping from a, its receive and the pong from b, both sends' completions. */
    private void pingPong(int i) {
        p.sa().set(JAVA_LONG, 0, 2L * i);
        p.qa.postSend(new SendWorkRequest().wrId(i).sge(p.ma, 0, 8));
        Completion ping = awaitOne(p.qb.recvCq());
        assertTrue(ping.isSuccess(), ping.toString());
        assertEquals(2L * i, p.sb().get(JAVA_LONG, 64));
        p.qb.postRecv(new RecvWorkRequest().wrId(i + 1).sge(p.mb, 64, 8));
        p.sb().set(JAVA_LONG, 0, 2L * i + 1);
        p.qb.postSend(new SendWorkRequest().wrId(i).sge(p.mb, 0, 8));
        Completion pong = awaitOne(p.qa.recvCq());
        assertTrue(pong.isSuccess(), pong.toString());
        assertEquals(2L * i + 1, p.sa().get(JAVA_LONG, 64));
        p.qa.postRecv(new RecvWorkRequest().wrId(i + 1).sge(p.ma, 64, 8));
        // The ping's acknowledgement came with the pong; the pong's comes with the next ping (or on its own).
        Completion pingSent = awaitOne(p.qa.sendCq());
        assertTrue(pingSent.isSuccess(), pingSent.toString());
        assertEquals(i, pingSent.wrId());
        if (i > 0) {
            Completion previousPong = awaitOne(p.qb.sendCq());
            assertTrue(previousPong.isSuccess(), previousPong.toString());
            assertEquals(i - 1, previousPong.wrId());
        }
    }

    @Test
    void aSendToAReceiverThatNeverAnswersIsAcknowledgedOnItsOwn() {
        p.qb.postRecv(new RecvWorkRequest().wrId(7).sge(p.mb, 0, 8));
        p.sa().set(JAVA_LONG, 0, 42);
        p.qa.postSend(new SendWorkRequest().wrId(3).sge(p.ma, 0, 8));
        // The receiving side polls until its receive completes, then neither polls nor sends again: its progress
        // thread sends the acknowledgement it owes.
        Completion received = awaitOne(p.qb.recvCq());
        assertTrue(received.isSuccess(), received.toString());
        assertEquals(42, p.sb().get(JAVA_LONG, 0));
        Completion sent = awaitOne(p.qa.sendCq());
        assertTrue(sent.isSuccess(), sent.toString());
        assertEquals(3, sent.wrId());
        assertEquals(8, sent.byteLength());
    }
}

package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Doorbells rung by plain stores, as a GPU or a kernel thread rings them: nobody calls the provider,
 * and the agent must find the work by polling doorbell records.
 */
class PlainStoreRingTest {
    @TempDir
    Path base;

    /** Writes a prepared send's doorbell record and doorbell with plain stores, from another thread. */
    private static void ringByStores(SendRequest s) throws InterruptedException {
        Memop.Write32 dbrec = (Memop.Write32) s.memops().get(0);
        Memop.Write64 db = (Memop.Write64) s.memops().get(1);
        Thread t = new Thread(() -> {
            dbrec.target().set32(dbrec.value(), true);
            db.target().set64(db.value(), false);
        });
        t.start();
        t.join();
    }

    @Test
    void theAgentRunsAnAnnouncedPlainStoreRing() throws Exception {
        try (NicPair p = new NicPair(base, 4096, Access.ALL, Access.ALL)) {
            p.qb.postRecv(new RecvWorkRequest().wrId(1).sge(p.mb, 0, 8));
            p.sa().set(JAVA_LONG, 0, 101);
            SendRequest s = p.qa.prepareSend(new SendWorkRequest().sge(p.ma, 0, 8));
            s.expectPlainStoreRing();
            ringByStores(s);
            Completion c = awaitOne(p.qb.recvCq());
            assertTrue(c.isSuccess(), c.toString());
            assertEquals(101, p.sb().get(JAVA_LONG, 0));
            // The agent marks the send executed just after it wrote the receive's CQE: allow it that moment.
            long until = System.nanoTime() + 5_000_000_000L;
            while (!s.isExecuted() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            assertTrue(s.isExecuted(), "the agent ran the send but did not mark it executed within 5 s");
        }
    }

    @Test
    void theAgentAlsoFindsAnUnannouncedPlainStoreRing() throws Exception {
        try (NicPair p = new NicPair(base, 4096, Access.ALL, Access.ALL)) {
            for (int i = 0; i < 3; i++) {
                p.qb.postRecv(new RecvWorkRequest().wrId(i).sge(p.mb, i * 8L, 8));
            }
            SendRequest[] s = new SendRequest[3];
            for (int i = 0; i < 3; i++) {
                p.sa().set(JAVA_LONG, i * 8L, 200 + i);
                s[i] = p.qa.prepareSend(new SendWorkRequest().wrId(i).sge(p.ma, i * 8L, 8));
            }
            // Ringing the last one rings them all: the doorbell record is a cumulative producer index.
            ringByStores(s[2]);
            for (int i = 0; i < 3; i++) {
                assertEquals(i, awaitOne(p.qb.recvCq()).wrId());
                assertEquals(200 + i, p.sb().get(JAVA_LONG, i * 8L));
            }
        }
    }
}

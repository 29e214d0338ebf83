package dev.gdasync.test.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A peer in a child JVM: reads never hang, the child exits with its stdin, close and kill reap it. */
@Timeout(60)
class RemotePeerTest {
    @TempDir
    Path base;

    @Test
    void readsHaveDeadlinesAndChildExitsWhenStdinCloses() {
        RemotePeer peer = RemotePeer.start("harness", Checks.jobId("harness"), base);
        try (peer) {
            assertEquals("", peer.call("PING", Duration.ZERO));
            long t0 = System.nanoTime();
            // Nothing was asked: the read must fail by its deadline, naming the child and its output.
            AssertionFailedError e = assertThrows(AssertionFailedError.class,
                    () -> peer.child().readLine(Duration.ofMillis(300)));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 5_000, "readLine(300 ms) took " + ms + " ms");
            assertTrue(e.getMessage().contains("no answer within 300 ms") && e.getMessage().contains("HELLO"), e.getMessage());
            // An ERR answer is a PeerException with the child's message.
            PeerException pe = assertThrows(PeerException.class, () -> peer.call("NOSUCH", Duration.ZERO));
            assertTrue(pe.getMessage().contains("unknown command NOSUCH"), pe.getMessage());
        }
        // close() closed stdin; the child closed its NIC, removed its directory and exited 0.
        assertFalse(peer.child().isAlive());
        assertEquals(0, peer.child().awaitExit(Duration.ofSeconds(1)));
        assertFalse(peer.processDirectory().toFile().exists(), "the child's directory is removed at a clean exit");
    }

    @Test
    void killReapsAndLaterReadsFailFast() {
        try (RemotePeer peer = RemotePeer.start("harness-kill", Checks.jobId("harness"), base)) {
            peer.kill();
            assertFalse(peer.child().isAlive());
            long t0 = System.nanoTime();
            AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> peer.call("PING", Duration.ofSeconds(5)));
            assertTrue((System.nanoTime() - t0) / 1_000_000 < 10_000);
            assertTrue(e.getMessage().contains("exited with status"), e.getMessage());
        }
    }
}

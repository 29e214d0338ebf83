package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.RemotePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A killed process leaves its shared-memory directory behind; the next software NIC opened on the
 * same base removes it, and leaves the directory of a live process alone.
 */
@Timeout(120)
class StaleDirectoryTest {
    @TempDir
    Path base;

    @Test
    void aNewNicRemovesTheDirectoryOfAKilledProcessOnly() throws IOException {
        String job = jobId("stale");
        try (RemotePeer victim = RemotePeer.start("stale-victim", job, base);
             RemotePeer survivor = RemotePeer.start("stale-survivor", job, base)) {
            Path dead = victim.processDirectory();
            Path alive = survivor.processDirectory();
            assertTrue(dead.startsWith(base), dead + " is not under the base " + base);
            victim.alloc("r", 1 << 20);
            victim.register("r", "r", 0, 1 << 20, Access.ALL);
            victim.createQp("q", new QueuePairConfig(4, 4, 8));
            long files = count(dead);
            assertTrue(files >= 3, "expected node, region and queue pair files in " + dead + ", found " + files);

            victim.kill();
            assertTrue(Files.isDirectory(dead), "the killed process's directory should still be there");
            assertEquals(files, count(dead));

            try (LocalPeer me = LocalPeer.open("stale-cleaner", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
                assertFalse(Files.exists(dead), "opening a NIC did not remove the stale directory " + dead);
                assertTrue(Files.isDirectory(alive), "opening a NIC removed the live process's directory " + alive);
                assertTrue(Files.isDirectory(me.nic().directory().processDirectory()));
                // The survivor is untouched and still works.
                survivor.alloc("r", 4096);
                survivor.register("r", "r", 0, 4096, Access.ALL);
            }
            assertEquals(0, survivor.exit());
            assertFalse(Files.exists(alive), "a clean exit removes the process's own directory");
        }
    }

    private static long count(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }
}

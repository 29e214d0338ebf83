package dev.gdasync.libmp;

import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * GPU memory through the Mp API ({@code allocateDevice}, {@code register}, address-only buffers, {@code free})
 * between two ranks, in a child JVM against the stand-in driver library.
 */
class MpDeviceMemoryTest {
    @TempDir
    Path dir;

    @Test
    void ranksExchangeMessagesBetweenGpuBuffersAndTheRulesHold() throws IOException {
        Optional<String> reason = FakeCuda.unavailableReason();
        reason.ifPresent(r -> System.out.println("SKIPPED (fake libcuda): " + r));
        assumeTrue(reason.isEmpty(), reason.orElse(""));
        Path lib = FakeCuda.build(Files.createDirectory(dir.resolve("lib")));
        Path devmem = Files.createDirectory(dir.resolve("devmem"));
        FakeCuda.Child c = FakeCuda.run(lib, dir, Map.of("FAKE_CUDA_SHM_DIR", devmem.toString()), MpDeviceMemoryMain.class,
                Files.createDirectory(dir.resolve("shm")).toString());
        assertFalse(c.stdout().contains("FAIL"), c::toString);
        for (String line : new String[]{"ok device-to-device-and-back", "ok rules-rank-0", "ok rules-rank-1", "ok ranks-finished",
                "end"}) {
            assertTrue(c.stdout().contains(line + "\n"), () -> line + " missing:\n" + c);
        }
        assertEquals(0, c.exitCode(), c::toString);
    }
}

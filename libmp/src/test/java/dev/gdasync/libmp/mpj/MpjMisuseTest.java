package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import xdev.ProcessID;
import xdev.XDevException;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Misuse of the MPJ route: the device before MPJ initialized it, the accessor outside an MPJ job, MpjMain without the
 * launcher's environment or a program, and {@code mprun --mpj} without MPJ Express. Each gets a precise message and
 * changes nothing.
 */
@Timeout(120)
class MpjMisuseTest {

    @Test
    void theDeviceRefusesCallsBeforeMpiInit() {
        GdasyncDevice d = new GdasyncDevice();
        ProcessID someone = new ProcessID(new UUID(1, 2));
        for (Runnable call : List.<Runnable>of(() -> d.id(), () -> d.isend(null, someone, 0, 0),
                () -> d.irecv(null, someone, 0, 0, null), () -> d.iprobe(someone, 0, 0), () -> d.peek(), () -> d.finish())) {
            XDevException e = assertThrows(XDevException.class, call::run);
            assertEquals("the gdasync device is not initialized: MPI.Init first", e.getMessage());
        }
        assertEquals("gdasync MPJ device (not initialized)", d.toString());
        assertThrows(NullPointerException.class, () -> new GdasyncDevice(null));
    }

    @Test
    void initOutsideALaunchedJobSaysWhatIsMissing() {
        // This test JVM has no GDASYNC_RANK: the device cannot join a job.
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("GDASYNC_RANK") == null, "run outside a launched job");
        XDevException e = assertThrows(XDevException.class, () -> new GdasyncDevice().init(new String[] {"0", "x", "y"}));
        assertTrue(e.getMessage().startsWith("MPJ over gdasync runs in the ranks of scripts/mprun --mpj"), e.getMessage());
    }

    @Test
    void badSlotAndRendezvousSettingsAreRefusedBeforeJoiningTheJob() {
        Map<String, String> cases = Map.of(
                GdasyncDevice.SLOTS_PROPERTY + "=0", "gdasync.mpj.slots must be from 1 to 1024, got 0",
                GdasyncDevice.SLOTS_PROPERTY + "=many", "gdasync.mpj.slots must be a whole number, got 'many'",
                GdasyncDevice.SLOT_BYTES_PROPERTY + "=100", "gdasync.mpj.slot.bytes must be a multiple of 8 from 80 to "
                        + "16777216, got 100",
                GdasyncDevice.SLOT_BYTES_PROPERTY + "=40", "gdasync.mpj.slot.bytes must be a multiple of 8 from 80 to "
                        + "16777216, got 40",
                GdasyncDevice.RENDEZVOUS_BYTES_PROPERTY + "=0", "gdasync.mpj.rendezvous.bytes must be at least 1, got 0",
                GdasyncDevice.RENDEZVOUS_POOL_PROPERTY + "=100", "gdasync.mpj.rendezvous.pool.bytes must be a multiple "
                        + "of 64 from 0 to 1073741824, got 100",
                GdasyncDevice.RENDEZVOUS_POOL_PROPERTY + "=-64", "gdasync.mpj.rendezvous.pool.bytes must be a multiple "
                        + "of 64 from 0 to 1073741824, got -64",
                GdasyncDevice.RENDEZVOUS_GROW_PROPERTY + "=-1", "gdasync.mpj.rendezvous.grow.bytes must be from 0 to "
                        + "1099511627776, got -1",
                GdasyncDevice.RENDEZVOUS_GROW_PROPERTY + "=lots", "gdasync.mpj.rendezvous.grow.bytes must be a whole "
                        + "number, got 'lots'");
        cases.forEach((setting, message) -> {
            String name = setting.substring(0, setting.indexOf('='));
            System.setProperty(name, setting.substring(setting.indexOf('=') + 1));
            try {
                XDevException e = assertThrows(XDevException.class, () -> new GdasyncDevice().init(new String[] {"0", "x", "y"}));
                assertEquals(message, e.getMessage());
            } finally {
                System.clearProperty(name);
            }
        });
    }

    @Test
    void theAccessorOutsideAnMpjJobSaysHowToGetOne() {
        assertFalse(MpjGdasync.active());
        IllegalStateException e = assertThrows(IllegalStateException.class, MpjGdasync::mp);
        assertEquals("MPJ Express does not run over gdasync in this process: start it with scripts/mprun --mpj and call "
                + "MPI.Init first", e.getMessage());
        assertThrows(NullPointerException.class, () -> MpjGdasync.abort(null));
    }

    @Test
    void theStreamCallsOutsideAnMpjJobSayHowToGetOne() {
        try (dev.gdasync.gdsync.stream.HostStream s = dev.gdasync.gdsync.stream.HostStream.create("misuse")) {
            String how = ": MPJ Express does not run over gdasync in this process: start it with scripts/mprun --mpj "
                    + "and call MPI.Init first";
            mpi.MPIException e = assertThrows(mpi.MPIException.class,
                    () -> MpjOnStream.isendOnStream(null, new int[1], 0, 1, null, 1, 0, s));
            assertEquals("isendOnStream" + how, e.getMessage());
            e = assertThrows(mpi.MPIException.class, () -> MpjOnStream.waitOnStream(null, s));
            assertEquals("waitOnStream" + how, e.getMessage());
        }
    }

    @Test
    void mpjMainWithoutTheLauncherOrAProgramExitsWithTwoAndSaysWhy() {
        Map<String, String> noRank = new HashMap<>();
        noRank.put("GDASYNC_RANK", null);
        try (ChildProcess p = ChildProcess.start("mpjmain", ChildProcess.javaCommand(MpjMain.class,
                List.of(MpjMain.class.getName())), noRank)) {
            assertEquals(2, p.awaitExit(Duration.ofSeconds(60)), p.describe());
            String said = String.join("\n", p.stderr());
            assertTrue(said.startsWith("MpjMain: no rank and size in the environment: start the ranks with scripts/mprun")
                    && said.contains("(start MPJ programs over gdasync with scripts/mprun --mpj, or with mpirun or srun as"
                    + " other gdasync jobs: docs/mpj.md)"), p.describe());
        }
        Map<String, String> rank = Map.of("GDASYNC_RANK", "0");
        try (ChildProcess p = ChildProcess.start("mpjmain", ChildProcess.javaCommand(MpjMain.class, List.of("no.such.Main")), rank)) {
            assertEquals(2, p.awaitExit(Duration.ofSeconds(60)), p.describe());
            assertTrue(p.stderr().contains("MpjMain: no class no.such.Main on the class path"), p.describe());
        }
    }

    @Test
    void mprunMpjWithoutMpjHomeFailsBeforeStartingARank() {
        Map<String, String> env = new HashMap<>();
        env.put("MPJ_HOME", null);
        try (ChildProcess mprun = MpRunProcess.start(env, "-np", "2", "--mpj", MpjConformanceMain.class.getName())) {
            assertEquals(1, mprun.awaitExit(Duration.ofSeconds(60)), mprun.describe());
            assertTrue(mprun.stderr().stream().anyMatch(l -> l.startsWith("mprun: --mpj: MPJ_HOME is not set")), mprun.describe());
            assertFalse(mprun.stdout().stream().anyMatch(l -> l.startsWith("[0]")), "no rank started: " + mprun.describe());
        }
        env.put("MPJ_HOME", "/nonexistent-mpj-home");
        try (ChildProcess mprun = MpRunProcess.start(env, "-np", "2", "--mpj", MpjConformanceMain.class.getName())) {
            assertEquals(1, mprun.awaitExit(Duration.ofSeconds(60)), mprun.describe());
            assertTrue(mprun.stderr().contains("mprun: --mpj: MPJ_HOME=/nonexistent-mpj-home has no lib/mpj.jar "
                    + "(scripts/lib/common.sh's ensure_mpj builds a complete MPJ_HOME)"), mprun.describe());
        }
    }
}

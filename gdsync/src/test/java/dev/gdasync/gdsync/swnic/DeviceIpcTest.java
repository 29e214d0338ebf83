package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Device memory between two processes through CUDA IPC, against the stand-in driver library: two child
 * JVMs ({@link DevicePeerMain}) meet through files in a shared folder, and the user process reaches the
 * owner's device memory with every opcode that moves bytes. Both children log their driver calls to one
 * file, so the order of the two processes' calls can be checked.
 */
class DeviceIpcTest {
    private static final List<String> USER_DEVICE_STEPS = List.of("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "99");
    private static final List<String> USER_HOST_STEPS = List.of("11", "12", "99");

    @TempDir
    static Path dir;
    private static Path fake;
    private static String skip;
    private static final AtomicInteger RUNS = new AtomicInteger();

    @BeforeAll
    static void build() throws IOException {
        Optional<String> reason = FakeCuda.unavailableReason();
        if (reason.isPresent()) {
            skip = reason.get();
            return;
        }
        fake = FakeCuda.build(Files.createDirectory(dir.resolve("lib")));
    }

    /** What the two processes printed and the driver calls they logged. */
    private record Run(FakeCuda.Child owner, FakeCuda.Child user, List<String> log) {
        String describe() {
            return "--- owner\n" + owner + "\n--- user\n" + user + "\n--- driver log\n" + String.join("\n", log);
        }

        String ownerValue(String key) {
            return owner.stdout().lines().filter(l -> l.startsWith(key + " ")).findFirst()
                    .orElseThrow(() -> new AssertionError("owner printed no " + key + "\n" + describe()))
                    .substring(key.length() + 1);
        }

        int index(String prefix) {
            for (int i = 0; i < log.size(); i++) {
                if (log.get(i).startsWith(prefix)) {
                    return i;
                }
            }
            return -1;
        }
    }

    private static Run run(String ending, String userMode, boolean userHasDriver, Map<String, String> ownerEnv,
                           Map<String, String> userEnv) throws Exception {
        if (skip != null) {
            System.out.println("SKIPPED (fake libcuda): " + skip);
        }
        assumeTrue(skip == null, skip);
        int n = RUNS.incrementAndGet();
        Path folder = Files.createDirectory(dir.resolve("run" + n));
        Path shm = Files.createDirectory(folder.resolve("shm"));
        Path devmem = Files.createDirectory(folder.resolve("devmem"));
        Path log = folder.resolve("driver.log");
        Map<String, String> common = Map.of("FAKE_CUDA_LOG", log.toString(), "FAKE_CUDA_SHM_DIR", devmem.toString());
        Map<String, String> oe = new HashMap<>(common);
        oe.putAll(ownerEnv);
        Map<String, String> ue = new HashMap<>(common);
        ue.putAll(userEnv);
        // Both children must run at once: a thread each (the common pool may have a single thread).
        try (ExecutorService children = Executors.newFixedThreadPool(2)) {
            Future<FakeCuda.Child> owner = children.submit(() -> FakeCuda.run(fake, folder, oe,
                    DevicePeerMain.class, "owner", folder.toString(), shm.toString(), ending));
            Future<FakeCuda.Child> user = children.submit(() -> FakeCuda.run(
                    userHasDriver ? fake : null, folder, ue, DevicePeerMain.class, userMode, folder.toString(), shm.toString()));
            return new Run(owner.get(), user.get(), Files.exists(log) ? Files.readAllLines(log) : List.of());
        }
    }

    private static void assertClean(Run r, List<String> userSteps) {
        for (FakeCuda.Child c : List.of(r.owner(), r.user())) {
            // A halted owner ends with "halting": Runtime.halt skips the rest of main.
            assertTrue(c.stdout().contains("end\n") || (c == r.owner() && c.stdout().endsWith("halting\n")), r::describe);
            assertFalse(c.stdout().contains("FAIL "), r::describe);
            assertEquals(0, c.exitCode(), r::describe);
        }
        for (String step : userSteps) {
            assertTrue(r.user().stdout().contains("ok user-step-" + step + "\n"), r::describe);
            assertTrue(r.owner().stdout().contains("ok owner-step-" + step + "\n"), r::describe);
        }
        assertTrue(r.owner().stdout().contains("ok owner-serves-every-step\n"), r::describe);
        assertTrue(r.user().stdout().contains("ok the-owner-going-away-unmaps-its-device-memory\n"), r::describe);
    }

    private static long pid(List<String> log, String call) {
        return log.stream().filter(l -> l.startsWith(call)).map(l -> l.substring(l.lastIndexOf("pid=") + 4))
                .mapToLong(Long::parseLong).findFirst().orElse(-1);
    }

    @Test
    void everyOpcodeReachesThePeersDeviceMemoryThroughOneIpcMappingUnmappedBeforeTheOwnerFreesIt() throws Exception {
        Run r = run("close", "user", true, Map.of(), Map.of());
        assertClean(r, USER_DEVICE_STEPS);
        assertTrue(r.owner().stdout().contains("ok owner-closed\n"), r::describe);
        assertTrue(r.user().stdout().contains("peer-left PEER_CLOSED"), r::describe);
        String device = r.ownerValue("device");
        // The owner's region was opened once by the user, however many requests and keys reached it.
        List<String> opens = r.log().stream().filter(l -> l.startsWith("cuIpcOpenMemHandle ")).toList();
        assertEquals(1, opens.size(), r::describe);
        assertTrue(opens.getFirst().contains(" flags=1 -> 0x"), r::describe);
        assertFalse(r.log().stream().anyMatch(l -> l.contains("invalid")), r::describe);
        // The user unmapped it when the owner closed, before the owner freed it.
        int close = r.index("cuIpcCloseMemHandle ");
        int free = r.index("cuMemFree " + device + " ");
        assertTrue(close >= 0 && free > close, r::describe);
        long userPid = pid(r.log(), "cuIpcCloseMemHandle ");
        long ownerPid = pid(r.log(), "cuMemFree " + device + " ");
        assertTrue(userPid > 0 && ownerPid > 0 && userPid != ownerPid, r::describe);
        long allocs = r.log().stream().filter(l -> l.startsWith("cuMemAlloc 0x")).count();
        long frees = r.log().stream().filter(l -> l.startsWith("cuMemFree 0x")).count();
        assertEquals(2, allocs, r::describe);
        assertEquals(allocs, frees, r::describe);
    }

    @Test
    void aKilledOwnerIsNoticedAndItsMemoryUnmapped() throws Exception {
        Run r = run("halt", "user", true, Map.of(), Map.of());
        assertClean(r, USER_DEVICE_STEPS);
        assertTrue(r.owner().stdout().contains("halting"), r::describe);
        assertTrue(r.user().stdout().contains("peer-left PEER_DEAD"), r::describe);
        assertTrue(r.index("cuIpcCloseMemHandle ") >= 0, r::describe);
    }

    @Test
    void aPeerWithoutTheDriverGetsAnErrorCompletionForDeviceMemoryAndStillReachesHostMemory() throws Exception {
        Run r = run("close", "user-host", false, Map.of(), Map.of());
        assertClean(r, USER_HOST_STEPS);
        assertTrue(r.user().stderr().contains("libcuda.so.1 not found"), r::describe);
        assertFalse(r.log().stream().anyMatch(l -> l.startsWith("cuIpcOpenMemHandle")), r::describe);
    }

    @Test
    void aFailedIpcOpenIsAnErrorCompletionWithTheDriversReasonLogged() throws Exception {
        Run r = run("close", "user-host", true, Map.of(), Map.of("FAKE_CUDA_IPC_OPEN_RESULT", "205"));
        assertClean(r, USER_HOST_STEPS);
        assertTrue(r.user().stderr().contains("CUDA_ERROR_MAP_FAILED (205)"), r::describe);
        assertEquals(1, r.log().stream().filter(l -> l.startsWith("cuIpcOpenMemHandle ") && l.contains("-> 205")).count(),
                r::describe);
    }

    @Test
    void memoryTheOwnerCouldNotExportIsUnreachableForPeersButWorksForItsOwner() throws Exception {
        Run r = run("close", "user-host", true, Map.of("FAKE_CUDA_IPC_GET_RESULT", "801"), Map.of());
        assertClean(r, USER_HOST_STEPS);
        assertTrue(r.owner().stderr().contains("cannot be shared with other processes"), r::describe);
        assertTrue(r.user().stderr().contains("the owner could not export it"), r::describe);
        assertFalse(r.log().stream().anyMatch(l -> l.startsWith("cuIpcOpenMemHandle")), r::describe);
    }
}

package dev.gdasync.apps.gpulatency;

import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code gpu-latency}'s command line, its answer without a GPU, and a whole run on the stand-in driver (whose
 * streams are threads: the figures mean nothing, the flow and the CSV do).
 */
class GpuLatencyTest {
    @TempDir
    Path dir;

    private record Ran(int status, String out, String err) {
    }

    private static Ran run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = GpuLatency.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Ran(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void badArgumentsExitWithTwoAndSayWhatIsWrongInOneLineAndAHint() {
        String hint = "Run 'gpu-latency --help' for the options.\n";
        Ran unknown = run("--size", "8");
        assertEquals(2, unknown.status());
        assertEquals("gpu-latency: unknown options: '--size', '8'\n" + hint, unknown.err());
        assertEquals("gpu-latency: missing required parameter for option '--iters' (N)\n" + hint, run("--iters").err());
        Ran zero = run("--iters", "0");
        assertEquals(2, zero.status());
        assertEquals("gpu-latency: invalid value for option '--iters': '0' is not a whole number from 1 to 10000000\n" + hint,
                zero.err());
        assertEquals(2, run("--iters", "ten").status());
        Ran csv = run("--csv", dir.resolve("no-such-folder/x.csv").toString());
        assertEquals(2, csv.status(), "an unwritable output file is refused before any measuring");
        assertEquals("gpu-latency: invalid value for option '--csv': cannot write '" + dir.resolve("no-such-folder/x.csv")
                + "': the folder " + dir.resolve("no-such-folder") + " does not exist\n" + hint, csv.err());
        assertTrue(Files.notExists(dir.resolve("no-such-folder")), "no folder is made");
    }

    @Test
    void helpAndVersionGoToStandardOutputWithoutColour() {
        Ran help = run("--help");
        assertEquals(0, help.status());
        assertTrue(help.out().startsWith("Usage: gpu-latency [-hV] [--probe] [--csv=FILE] [--iters=N]"), help.out());
        assertTrue(help.out().contains("--probe"), help.out());
        assertTrue(help.out().chars().noneMatch(c -> c == 0x1b), "no escape codes when the output is not a terminal");
        Ran version = run("--version");
        assertEquals(0, version.status());
        assertTrue(version.out().startsWith("gpu-latency (gdasync "), version.out());
    }

    @Test
    void probeSaysWhetherThereIsAGpu() {
        Optional<String> noGpu = CudaDriver.unavailableReason();
        Ran r = run("--probe");
        if (noGpu.isPresent()) {
            assertEquals(GpuLatency.NO_GPU, r.status());
            assertEquals("no GPU here: " + noGpu.get() + "\n", r.out());
        } else {
            assertEquals(0, r.status());
            assertTrue(r.out().startsWith("GPU: "), r.out());
        }
    }

    @Test
    void withoutAGpuItSaysWhy() {
        Optional<String> noGpu = CudaDriver.unavailableReason();
        if (noGpu.isEmpty()) {
            System.out.println("GpuLatencyTest: skipping the no-GPU message check: this machine has a usable GPU");
        }
        assumeTrue(noGpu.isPresent(), "this machine has a usable GPU");
        Ran r = run("--iters", "10");
        assertEquals(1, r.status());
        assertEquals("gpu-latency: no GPU here: " + noGpu.get() + "\n", r.err());
    }

    @Test
    void aRunOnTheStandInDriverWritesBothRows() throws IOException {
        Optional<String> reason = FakeCuda.unavailableReason();
        reason.ifPresent(r -> System.out.println("SKIPPED (fake libcuda): " + r));
        assumeTrue(reason.isEmpty(), reason.orElse(""));
        Path lib = FakeCuda.build(Files.createDirectory(dir.resolve("lib")));
        Path csv = dir.resolve("latency.csv");
        FakeCuda.Child c = FakeCuda.run(lib, dir, Map.of(), GpuLatency.class, "--iters", "50", "--csv", csv.toString());
        assertEquals(0, c.exitCode(), c::toString);
        assertTrue(c.stdout().contains("gpu-latency: Fake GPU (device 0"), c::toString);
        List<String> rows = Files.readAllLines(csv);
        assertEquals("test,iters,median_us,p99_us,min_us", rows.getFirst(), rows::toString);
        assertEquals(3, rows.size(), rows::toString);
        assertTrue(rows.get(1).matches("write,50,[0-9.]+,[0-9.]+,[0-9.]+"), rows::toString);
        assertTrue(rows.get(2).matches("wait,50,[0-9.]+,[0-9.]+,[0-9.]+"), rows::toString);
    }
}

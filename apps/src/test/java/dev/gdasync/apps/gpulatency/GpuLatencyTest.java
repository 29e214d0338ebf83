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
    void badArgumentsExitWithTwoAndSayWhatIsWrong() {
        assertEquals("gpu-latency: unknown argument --size (usage: gpu-latency [--iters N] [--csv FILE])\n",
                run("--size", "8").err());
        assertEquals("gpu-latency: --iters needs a value (usage: gpu-latency [--iters N] [--csv FILE])\n", run("--iters").err());
        Ran zero = run("--iters", "0");
        assertEquals(2, zero.status());
        assertEquals("gpu-latency: --iters must be a whole number in 1..10000000, got '0'\n", zero.err());
        assertEquals(2, run("--iters", "ten").status());
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

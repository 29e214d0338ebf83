package dev.gdasync.apps.gpulatency;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDevice;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaStream;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;

import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.OutputFile;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * {@code gpu-latency}: the two latencies a CUDA stream adds to GPUDirect Async, measured from the CPU.
 * <ul>
 * <li>{@code write}: from the CPU's call that queues {@code cuStreamWriteValue32} on an idle stream to the
 *     CPU seeing the new value in host memory (the stream-triggered doorbell's path);</li>
 * <li>{@code wait}: a stream parked in {@code cuStreamWaitValue32} on a host word, then a
 *     {@code cuStreamWriteValue32} of an acknowledgement; from the CPU's store into the word to the CPU
 *     seeing the acknowledgement (the stream-awaited completion's path, plus one write back).</li>
 * </ul>
 * {@code scripts/gpu-check} runs it on a GPU machine: {@code gpu-latency [--iters N] [--csv FILE]};
 * {@code gpu-latency --probe} says whether there is a GPU to measure.
 */
public final class GpuLatency {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final VarHandle WORD = INT.varHandle();
    /** How long the CPU waits for one sample before giving up (the stream is then broken). */
    private static final long SAMPLE_LIMIT_NANOS = 5_000_000_000L;

    private GpuLatency() {
    }

    /** The exit status of {@code --probe} on a machine without a usable GPU. */
    static final int NO_GPU = 3;

    /** The command line. */
    @Command(name = "gpu-latency", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
            sortOptions = false, usageHelpAutoWidth = false,
            description = {"The two latencies a CUDA stream adds to GPUDirect Async, measured from the CPU: write"
                    + " (cuStreamWriteValue32 queued on an idle stream until the CPU sees the word) and wait (a stream"
                    + " parked in cuStreamWaitValue32 on a host word, released by a CPU store, acknowledging with a write)."},
            optionListHeading = "%nOptions:%n")
    static final class Options {
        @Option(names = "--iters", paramLabel = "N", converter = Iters.class,
                description = "samples of each latency, after a tenth of them as warm-up (default 10000)")
        int iters = 10_000;

        @Option(names = "--csv", paramLabel = "FILE", converter = OutputFile.class,
                description = "write test,iters,median_us,p99_us,min_us rows to FILE (its folder must exist)")
        Path csv;

        @Option(names = "--probe", description = "only say whether this machine has a usable GPU: exit 0 if so, "
                + NO_GPU + " if not")
        boolean probe;
    }

    /** --iters: 1 to 10^7. */
    static final class Iters implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String v) {
            try {
                int n = Integer.parseInt(v.strip());
                if (n >= 1 && n <= 10_000_000) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw new TypeConversionException("'" + v + "' is not a whole number from 1 to 10000000");
        }
    }

    /**
     * @param args {@code [--iters N] [--csv FILE] [--probe]}, or {@code --help}
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        Options o = new Options();
        OptionalInt stop = CommandLines.parse(CommandLines.of(o), args, out, err, true);
        if (stop.isPresent()) {
            return stop.getAsInt();
        }
        int iters = o.iters;
        Path csv = o.csv;
        Optional<String> noGpu = CudaDriver.unavailableReason();
        if (o.probe) {
            out.println(noGpu.map(r -> "no GPU here: " + r).orElseGet(() -> "GPU: " + CudaDriver.open().device(0)));
            return noGpu.isPresent() ? NO_GPU : 0;
        }
        if (noGpu.isPresent()) {
            err.println("gpu-latency: no GPU here: " + noGpu.get());
            return 1;
        }
        CudaDevice device = CudaDriver.open().device(0);
        List<String> rows = new ArrayList<>();
        try (CudaContext context = CudaContext.retainPrimary(device);
             CudaStream stream = CudaStream.create("gpu-latency", context);
             Arena arena = Arena.ofShared()) {
            MemorySegment page = arena.allocate(4096, 4096);
            MemoryWord flag = MemoryWord.word32(page, 0, "flag");
            MemoryWord go = MemoryWord.word32(page, 64, "go");
            MemoryWord ack = MemoryWord.word32(page, 128, "ack");
            out.println("gpu-latency: " + device + ", " + iters + " samples each, after " + iters / 10 + " warm-up samples");
            long[] write = writeLatency(stream, flag, page, iters);
            long[] wait = waitLatency(stream, go, ack, page, iters);
            rows.add(row("write", write));
            rows.add(row("wait", wait));
            out.printf(Locale.ROOT, "%-6s %10s %10s %10s%n", "test", "median_us", "p99_us", "min_us");
            for (String r : rows) {
                String[] f = r.split(",");
                out.printf(Locale.ROOT, "%-6s %10s %10s %10s%n", f[0], f[2], f[3], f[4]);
            }
        }
        if (csv != null) {
            try {
                List<String> lines = new ArrayList<>();
                lines.add("test,iters,median_us,p99_us,min_us");
                lines.addAll(rows);
                Files.write(csv, lines);
            } catch (IOException e) {
                err.println("gpu-latency: could not write " + csv + ": " + e.getMessage());
                return 1;
            }
        }
        return 0;
    }

    private static long[] writeLatency(CudaStream stream, MemoryWord flag, MemorySegment page, int iters) {
        long[] samples = new long[iters];
        int warm = iters / 10;
        for (int i = 1; i <= warm + iters; i++) {
            long t0 = System.nanoTime();
            stream.post(MemopBatch.of(new Memop.Write32(flag, i, true)));
            spinUntil(page, flag.offset(), i, "the stream's write of " + i);
            long dt = System.nanoTime() - t0;
            if (i > warm) {
                samples[i - warm - 1] = dt;
            }
        }
        stream.synchronize();
        return samples;
    }

    private static long[] waitLatency(CudaStream stream, MemoryWord go, MemoryWord ack, MemorySegment page, int iters) {
        long[] samples = new long[iters];
        int warm = iters / 10;
        for (int i = 1; i <= warm + iters; i++) {
            stream.post(MemopBatch.of(new Memop.Wait32(go, i, WaitCondition.GEQ, false), new Memop.Write32(ack, i, true)));
            // Let the stream reach the wait before the clock starts.
            pause(20_000);
            long t0 = System.nanoTime();
            WORD.setVolatile(page, go.offset(), i);
            spinUntil(page, ack.offset(), i, "the acknowledgement of " + i);
            long dt = System.nanoTime() - t0;
            if (i > warm) {
                samples[i - warm - 1] = dt;
            }
        }
        stream.synchronize();
        return samples;
    }

    private static void spinUntil(MemorySegment page, long offset, int value, String what) {
        long limit = System.nanoTime() + SAMPLE_LIMIT_NANOS;
        while ((int) WORD.getVolatile(page, offset) != value) {
            if (System.nanoTime() - limit > 0) {
                throw new IllegalStateException("gpu-latency: " + what + " did not arrive within 5 s");
            }
            Thread.onSpinWait();
        }
    }

    private static void pause(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    private static String row(String test, long[] samples) {
        long[] s = samples.clone();
        Arrays.sort(s);
        return String.format(Locale.ROOT, "%s,%d,%.3f,%.3f,%.3f", test, s.length, s[s.length / 2] / 1e3,
                s[Math.min(s.length - 1, (int) (s.length * 0.99))] / 1e3, s[0] / 1e3);
    }
}

package dev.gdasync.apps.gpulatency;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDevice;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaStream;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
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

/**
 * {@code gpu-latency}: the two latencies a CUDA stream adds to GPUDirect Async, measured from the CPU.
 * <ul>
 * <li>{@code write}: from the CPU's call that queues {@code cuStreamWriteValue32} on an idle stream to the
 *     CPU seeing the new value in host memory (the stream-triggered doorbell's path);</li>
 * <li>{@code wait}: a stream parked in {@code cuStreamWaitValue32} on a host word, then a
 *     {@code cuStreamWriteValue32} of an acknowledgement; from the CPU's store into the word to the CPU
 *     seeing the acknowledgement (the stream-awaited completion's path, plus one write back).</li>
 * </ul>
 * {@code scripts/gpu-check} runs it on a GPU machine: {@code gpu-latency [--iters N] [--csv FILE]}.
 */
public final class GpuLatency {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final VarHandle WORD = INT.varHandle();
    /** How long the CPU waits for one sample before giving up (the stream is then broken). */
    private static final long SAMPLE_LIMIT_NANOS = 5_000_000_000L;

    private GpuLatency() {
    }

    /**
     * @param args {@code [--iters N] [--csv FILE]}
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        int iters = 10_000;
        Path csv = null;
        String usage = "usage: gpu-latency [--iters N] [--csv FILE]";
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.equals("--iters") && !a.equals("--csv")) {
                err.println("gpu-latency: unknown argument " + a + " (" + usage + ")");
                return 2;
            }
            if (i + 1 >= args.length) {
                err.println("gpu-latency: " + a + " needs a value (" + usage + ")");
                return 2;
            }
            String v = args[++i];
            if (a.equals("--csv")) {
                csv = Path.of(v);
                continue;
            }
            try {
                iters = Integer.parseInt(v);
            } catch (NumberFormatException e) {
                iters = -1;
            }
            if (iters < 1 || iters > 10_000_000) {
                err.println("gpu-latency: --iters must be a whole number in 1..10000000, got '" + v + "'");
                return 2;
            }
        }
        Optional<String> noGpu = CudaDriver.unavailableReason();
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
                throw new UncheckedIOException(e);
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

package dev.gdasync.apps.shmembench;

import dev.gdasync.apps.shmemrun.ShmemMain;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.shmem.ShmemDevice;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.libmp.shmem.Shmem;
import dev.gdasync.libmp.shmem.ShmemCmp;
import dev.gdasync.libmp.shmem.ShmemKi;
import dev.gdasync.libmp.shmem.ShmemSignalOp;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code scripts/mprun -np 2 shmembench [--mode host,sa,ki]}: PE 0 against PE 1. {@code put}: a put and a quiet
 * (the data is at PE 1) per operation; {@code putnbi}: k non-blocking puts, then one quiet (bandwidth: bytes / time); {@code get}: a blocking get; {@code atomic}: a fetch-add of 8 bytes;
 * {@code pingpong}: a put-with-signal to the other PE, which waits for the signal and answers likewise (half a round
 * trip reported). {@code host}: the CPU calls and waits; {@code sa}: the CPU queues every operation on a host stream
 * ({@code putOnStream} + {@code quietOnStream}; {@code putSignalOnStream} + {@code signalWaitUntilOnStream}) and
 * waits once for the stream, so the figure is what the stream takes per operation (get and atomic have no stream
 * form). {@code ki}: a block of the host KI executor runs the operations through the shmem device API (shmem.cuh's
 * Java mirror, templated slots), timed inside the block. For each size the modes' rounds are interleaved; the median round is reported; every round's data checked.
 */
@Command(name = "scripts/mprun -np 2 shmembench", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false,
        description = "shmem latencies between two PEs from the CPU (host), a stream (sa) and a KI block (ki), side by side.")
public final class ShmemBench implements ShmemMain.App {
    @Option(names = "--max-size", paramLabel = "BYTES", defaultValue = "1048576",
            description = "the largest transfer; sizes are 8 B and powers of 4 up to it (default: ${DEFAULT-VALUE})")
    int maxSize;

    @Option(names = "--ops", paramLabel = "K", defaultValue = "200",
            description = "operations per round at 8 B, fewer for large sizes (at most 32 MiB moved per round; at least"
                    + " 10) (default: ${DEFAULT-VALUE})")
    int ops;

    @Option(names = "--rounds", paramLabel = "R", defaultValue = "5",
            description = "timed rounds per case, after one untimed (default: ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--mode", split = ",", paramLabel = "MODE", defaultValue = "host,sa,ki",
            description = "host, sa and/or ki (default: ${DEFAULT-VALUE})")
    List<String> modes;

    @Option(names = "--csv", paramLabel = "FILE", description = "write one row per case: " + LatencyChart.HEADER)
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE", description = "draw the rows of this run into this PNG")
    Path plot;

    private static final List<String> OPS = List.of("put", "putnbi", "get", "atomic", "pingpong");
    /** Operations of one KI launch: a ping-pong exchange takes two slots toward the peer, within the 256 allowed. */
    private static final int KI_OPS = 100;

    private ShmemBench() {
    }

    /**
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        ShmemMain.main("shmembench", new ShmemBench(), args);
    }

    /** @throws IllegalArgumentException if the job does not have exactly 2 PEs */
    @Override
    public long heapBytes(Mp mp) {
        if (mp.size() != 2) {
            throw new IllegalArgumentException("run it on 2 PEs (-np 2), not " + mp.size());
        }
        return 2L * maxSize + (1 << 16);
    }

    @Override
    public String check() {
        for (String m : modes) {
            if (!m.equals("host") && !m.equals("sa") && !m.equals("ki")) {
                return "--mode takes host, sa and ki, got '" + m + "'";
            }
        }
        if (maxSize < 8 || ops < 1 || rounds < 1) {
            return "--max-size must be >= 8, --ops and --rounds >= 1";
        }
        if (plot != null && csv == null) {
            return "--plot draws the rows written to --csv: give --csv too";
        }
        return null;
    }

    /** The symmetric memory of a run, and the running signal value (a fresh value per ping-pong exchange). */
    private static final class Buffers {
        final MemorySegment src;
        final MemorySegment dst;
        final MemorySegment sig;
        final MemorySegment counter;
        long signal;
        /** The stream of the sa mode, one for the whole run. */
        final HostStream stream;
        /** The host KI executor of the ki mode, one for the whole run. */
        final HostKiExecutor executor;

        Buffers(Shmem shmem, int maxSize) {
            stream = HostStream.create("shmembench-" + shmem.myPe());
            executor = HostKiExecutor.create("shmembench-ki-" + shmem.myPe(),
                    HostKiExecutor.Options.defaults().withAfterRing(shmem.mp()::progressStoreRings));
            src = shmem.calloc(maxSize, 1);
            dst = shmem.calloc(maxSize, 1);
            sig = shmem.calloc(1, 8);
            counter = shmem.calloc(1, 8);
        }
    }

    @Override
    public boolean run(Shmem shmem) throws IOException {
        int me = shmem.myPe();
        Buffers b = new Buffers(shmem, maxSize);
        List<LatencyChart.Row> rows = new ArrayList<>();
        long errors = 0;
        if (me == 0) {
            System.out.printf(Locale.ROOT, "%-9s %-5s %9s %12s%n", "op", "mode", "bytes", "us/op");
        }
        for (String op : OPS) {
            List<Integer> sizes = op.equals("atomic") ? List.of(8) : sizes();
            for (int size : sizes) {
                int k = Math.max(10, Math.min(ops, (32 << 20) / size));
                int kOps = modes.contains("ki") ? Math.min(k, KI_OPS) : k;
                // get and atomic have no stream form
                List<String> caseModes = modes.stream().filter(m -> !m.equals("sa") || op.startsWith("put")
                        || op.equals("pingpong")).toList();
                double[][] micros = new double[caseModes.size()][rounds];
                for (int r = -1; r < rounds; r++) {
                    for (int m = 0; m < caseModes.size(); m++) {
                        fill(b.src, size, r + 7L * m + 31L * size);
                        shmem.barrierAll();
                        double us = caseModes.get(m).equals("ki") ? ki(shmem, b, op, size, kOps)
                                : once(shmem, b, op, caseModes.get(m), size, kOps);
                        errors += checkData(shmem, b, op, size, kOps, r + 7L * m + 31L * size);
                        if (r >= 0) {
                            micros[m][r] = us;
                        }
                    }
                }
                if (me == 0) {
                    for (int m = 0; m < caseModes.size(); m++) {
                        double[] s = micros[m].clone();
                        Arrays.sort(s);
                        double median = s[s.length / 2];
                        rows.add(new LatencyChart.Row(op, caseModes.get(m), size, median));
                        System.out.printf(Locale.ROOT, "%-9s %-5s %9d %12.2f%n", op, caseModes.get(m), size, median);
                    }
                }
            }
        }
        b.stream.close();
        b.executor.close();
        shmem.barrierAll();
        if (me == 0) {
            System.out.println(errors == 0 ? "all data checks passed" : "DATA CHECKS FAILED: " + errors + " errors");
            if (csv != null) {
                StringBuilder out = new StringBuilder(LatencyChart.HEADER).append('\n');
                for (LatencyChart.Row r : rows) {
                    out.append(String.format(Locale.ROOT, "%s,%s,%d,%.3f%n", r.op(), r.mode(), r.bytes(), r.micros()));
                }
                if (csv.getParent() != null) {
                    Files.createDirectories(csv.getParent());
                }
                Files.writeString(csv, out, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
                System.out.println("csv: " + csv);
                if (plot != null) {
                    LatencyChart.write(rows, plot);
                    System.out.println("plot: " + plot);
                }
            }
        }
        return errors == 0;
    }

    private List<Integer> sizes() {
        List<Integer> s = new ArrayList<>(List.of(8));
        for (long v = 64; v <= maxSize; v *= 4) {
            s.add((int) v);
        }
        if (s.get(s.size() - 1) != maxSize) {
            s.add(maxSize);
        }
        return s;
    }

    /** @return µs per operation of one round on PE 0 (PE 1 returns 0) */
    private double once(Shmem shmem, Buffers b, String op, String mode, int size, int k) {
        int me = shmem.myPe();
        int peer = 1 - me;
        MemorySegment src = b.src.asSlice(0, size);
        MemorySegment dst = b.dst.asSlice(0, size);
        long t0 = System.nanoTime();
        int per = 1;
        if (op.equals("pingpong")) {
            per = 2;
            long first = b.signal + 1;
            b.signal += k;
            if (mode.equals("host")) {
                for (long i = first; i < first + k; i++) {
                    if (me == 0) {
                        shmem.putSignal(dst, src, b.sig, i, ShmemSignalOp.SET, peer);
                        shmem.signalWaitUntil(b.sig, ShmemCmp.EQ, i);
                    } else {
                        shmem.signalWaitUntil(b.sig, ShmemCmp.EQ, i);
                        shmem.putSignal(dst, src, b.sig, i, ShmemSignalOp.SET, peer);
                    }
                }
                shmem.quiet();
            } else {
                HostStream stream = b.stream;
                for (long i = first; i < first + k; i++) {
                    if (me == 0) {
                        shmem.putSignalOnStream(dst, src, b.sig, i, ShmemSignalOp.SET, peer, stream);
                        shmem.signalWaitUntilOnStream(b.sig, ShmemCmp.EQ, i, stream);
                    } else {
                        shmem.signalWaitUntilOnStream(b.sig, ShmemCmp.EQ, i, stream);
                        shmem.putSignalOnStream(dst, src, b.sig, i, ShmemSignalOp.SET, peer, stream);
                    }
                }
                shmem.quietOnStream(stream);
                stream.synchronize();
            }
        } else if (me == 0) {
            switch (op) {
                case "put", "putnbi" -> puts(shmem, b.stream, dst, src, peer, k, mode.equals("host"), op.equals("put"));
                case "get" -> {
                    for (int i = 0; i < k; i++) {
                        shmem.get(dst, b.src.asSlice(0, size), peer);
                    }
                }
                default -> {
                    for (int i = 0; i < k; i++) {
                        shmem.atomicFetchAdd(b.counter, 1, peer);
                    }
                }
            }
        }
        double us = (System.nanoTime() - t0) / 1e3 / k / per;
        shmem.barrierAll();
        return me == 0 ? us : 0;
    }

    /** k puts from the CPU (host) or rung by the stream, with a quiet after each ({@code put}) or after all. */
    private static void puts(Shmem shmem, HostStream stream, MemorySegment dst, MemorySegment src, int peer, int k,
                             boolean host, boolean quietEach) {
        for (int i = 0; i < k; i++) {
            if (host) {
                shmem.putNbi(dst, src, peer);
            } else {
                shmem.putOnStream(dst, src, peer, stream);
            }
            if (quietEach || i == k - 1) {
                if (host) {
                    shmem.quiet();
                } else {
                    shmem.quietOnStream(stream);
                }
            }
        }
        if (!host) {
            stream.synchronize();
        }
    }

    /**
     * The ki mode: one block of the host KI executor runs the round through the shmem device API (templated slots the
     * CPU prepared before the launch); the time is the block's own, from its first operation to its last quiet, so it
     * is what the kernel takes per operation. get and atomic are direct accesses to the peer's mapped heap.
     *
     * @return µs per operation on PE 0 (PE 1 returns 0)
     */
    private double ki(Shmem shmem, Buffers b, String op, int size, int k) {
        int me = shmem.myPe();
        int peer = 1 - me;
        MemorySegment src = b.src.asSlice(0, size);
        MemorySegment dst = b.dst.asSlice(0, size);
        boolean pingpong = op.equals("pingpong");
        long first = b.signal + 1;
        if (pingpong) {
            b.signal += k;
        }
        long[] nanos = new long[1];
        if (me == 0 || pingpong) {
            ShmemKi launch = shmem.kiPrepare(b.executor, 1, 2 * k);
            try {
                b.executor.shmem(launch.table(), launch.state(), 1, ctx -> {
                    long t0 = System.nanoTime();
                    for (int i = 0; i < k; i++) {
                        switch (op) {
                            case "put" -> ctx.put(dst, src, peer);
                            case "putnbi" -> ctx.putNbi(dst, src, peer);
                            case "get" -> ctx.get(dst, src, peer);
                            case "atomic" -> ctx.atomicFetchAdd(b.counter, 1, peer);
                            default -> {
                                long v = first + i;
                                if (me == 0) {
                                    ctx.putSignal(dst, src, b.sig, v, false, peer);
                                    ctx.signalWaitUntil(b.sig, ShmemDevice.CMP_EQ, v);
                                } else {
                                    ctx.signalWaitUntil(b.sig, ShmemDevice.CMP_EQ, v);
                                    ctx.putSignal(dst, src, b.sig, v, false, peer);
                                }
                            }
                        }
                    }
                    ctx.quiet();
                    nanos[0] = System.nanoTime() - t0;
                }).join();
            } finally {
                launch.complete();
            }
        }
        shmem.barrierAll();
        return me == 0 ? nanos[0] / 1e3 / k / (pingpong ? 2 : 1) : 0;
    }

    /** @return how many bytes (or counts) of the round's result were wrong on this PE */
    private static long checkData(Shmem shmem, Buffers b, String op, int size, int k, long seed) {
        long wrong = 0;
        int me = shmem.myPe();
        boolean receives = switch (op) {
            case "put", "putnbi" -> me == 1;
            case "get" -> me == 0;
            case "pingpong" -> true;
            default -> false;
        };
        if (receives) {
            // Both PEs filled src with the same pattern, so whatever arrived in dst must equal this PE's src.
            wrong += b.dst.asSlice(0, size).mismatch(b.src.asSlice(0, size)) < 0 ? 0 : 1;
            b.dst.asSlice(0, size).fill((byte) 0);
        }
        if (op.equals("atomic") && me == 1) {
            long got = b.counter.get(JAVA_LONG, 0);
            wrong += got % k == 0 && got > 0 ? 0 : 1;
        }
        shmem.barrierAll();
        return wrong;
    }

    /** Fills the first {@code size} bytes with a pattern that depends on the seed (the same on both PEs). */
    private static void fill(MemorySegment m, int size, long seed) {
        for (int i = 0; i < size; i++) {
            m.set(JAVA_BYTE, i, (byte) (seed * 31 + i * 7 + (i >>> 8)));
        }
    }
}

package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiCopy;
import dev.gdasync.ki.KiCopyWork;
import dev.gdasync.ki.KiExchange;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.KiTemplateArgs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A child JVM of {@link FakeCudaExecutorTest}: opens a {@link CudaKiExecutor} on the fake driver with
 * made-up kernel images, runs the named scenarios, and prints {@code scenario: outcome} lines.
 */
public final class ExecutorProbeMain {
    static final String PTX = ".version 8.0\n.target sm_80\n.address_size 64\n";

    private ExecutorProbeMain() {
    }

    static KernelImages images() {
        return KernelImages.of(List.of(80, 90), List.of("CUBIN_80".getBytes(StandardCharsets.US_ASCII),
                "CUBIN_90".getBytes(StandardCharsets.US_ASCII)), PTX);
    }

    /**
     * @param args scenario names
     */
    public static void main(String[] args) {
        try (Arena arena = Arena.ofShared()) {
            CudaKiExecutor executor;
            try {
                executor = CudaKiExecutor.open(0, images());
            } catch (RuntimeException e) {
                System.out.println("open: " + e.getClass().getSimpleName() + ": " + e.getMessage());
                System.out.println("end");
                return;
            }
            System.out.println("open: " + executor.name() + " | " + executor.description());
            MemorySegment words = arena.allocate(4096, 4096);
            MemorySegment tableMemory = arena.allocate(4096, 4096);
            KiTable table = RawTable.counts(tableMemory, words.address(), 2, 2, 2);
            System.out.println("table: 0x" + Long.toHexString(table.segment().address()));
            for (String scenario : args) {
                try {
                    run(scenario, executor, table, arena);
                } catch (RuntimeException e) {
                    System.out.println(scenario + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
            executor.close();
            System.out.println("closed");
            try {
                executor.pingPong(table, 1, true, 0, 1);
            } catch (IllegalStateException e) {
                System.out.println("after close: " + e.getMessage());
            }
        } catch (Throwable e) {
            System.out.println("unexpected: " + e);
            e.printStackTrace(System.out);
        }
        System.out.println("end");
    }

    private static void run(String scenario, CudaKiExecutor executor, KiTable table, Arena arena) {
        switch (scenario) {
            case "pingpong" -> {
                KiLaunch l = executor.pingPong(table, 2, true, 1000, 5_000_000);
                l.join();
                System.out.println("pingpong: joined, done=" + l.isDone());
            }
            case "templates" -> {
                KiLaunch l = executor.sendTemplates(table, List.of(new KiTemplateArgs(0x1000, 64, 7, 0x2000, 9),
                        new KiTemplateArgs(0x3000, 8, 7, 0x4000, 9)));
                l.join();
                System.out.println("templates: joined");
            }
            case "exchange" -> {
                KiLaunch l = executor.exchange(table, new KiExchange(2, 1, work(arena)), 7_000_000);
                l.join();
                System.out.println("exchange: joined");
            }
            case "occupancy" -> {
                executor.exchange(table, new KiExchange(4, 4, work(arena)), 7_000_000);
                System.out.println("occupancy: launched");
            }
            case "joinlimit" -> {
                KiLaunch l = executor.pingPong(table, 1, false, 0, 1_000_000);
                l.join(java.time.Duration.ofSeconds(5));
                System.out.println("joinlimit: joined");
            }
            default -> throw new IllegalArgumentException("no scenario " + scenario);
        }
    }

    private static KiCopyWork work(Arena arena) {
        MemorySegment buffers = arena.allocate(8192, 4096);
        KiCopy a = new KiCopy(buffers.asSlice(0, 256), buffers.asSlice(256, 256));
        KiCopy b = new KiCopy(buffers.asSlice(512, 256), buffers.asSlice(768, 256));
        KiCopy u = new KiCopy(buffers.asSlice(1024, 512), buffers.asSlice(1536, 512));
        KiCopy in = new KiCopy(buffers.asSlice(4096, 1024), buffers.asSlice(5120, 1024));
        return new KiCopyWork(List.of(a, b), List.of(u), in, 4, 100);
    }
}

package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.kernels.KiCopy;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiTemplateArgs;

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
            case "msccl" -> {
                MemorySegment arenaImage = arena.allocate(MSCCL_ARENA, 64);
                for (int i = 0; i < 4; i++) {
                    arenaImage.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i, i + 1);
                }
                executor.runMscclInterpreter(mscclTable(arena), arenaImage, 64, 5000, java.time.Duration.ofSeconds(10));
                System.out.println("msccl: ran, arena back: " + arenaImage.getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, 0)
                        + "," + arenaImage.getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, 3));
            }
            case "msccl-arena" -> executor.runMscclInterpreter(mscclTable(arena), arena.allocate(64, 64), 64, 5000,
                    java.time.Duration.ofSeconds(10));
            case "shmem" -> {
                MemorySegment heap = arena.allocate(4096, 4096);
                MemorySegment state = shmemState(executor, table, arena, 2);
                KiLaunch l = executor.shmemFetchAdd(table, state, 2, heap.asSlice(0, 8), 3, 1, heap.asSlice(64, 48));
                l.join();
                l = executor.shmemOrdering(table, state, 2, heap.asSlice(1024, 256), heap.asSlice(128, 16),
                        heap.asSlice(256, 16), 128, 5, true, false, 0, heap.asSlice(512, 16));
                l.join();
                System.out.println("shmem: joined");
            }
            case "shmem-pe" -> executor.shmemFetchAdd(table, shmemState(executor, table, arena, 2), 2,
                    arena.allocate(8, 8), 3, 2, arena.allocate(48, 8));
            case "shmem-state" -> executor.shmemFetchAdd(table, shmemState(executor, table, arena, 2), 3,
                    arena.allocate(8, 8), 3, 1, arena.allocate(72, 8));
            default -> throw new IllegalArgumentException("no scenario " + scenario);
        }
    }

    /** Arena bytes of {@link #mscclTable}. */
    static final long MSCCL_ARENA = 320;

    /**
     * A two-rank program by hand, in the kernel's format: rank 0's block sends its 4-element input chunk into rank 1's
     * block, which receives it into its output (slots of 16 bytes; regions at 128 and 192, semaphores at 256).
     */
    static dev.gdasync.ki.msccl.MscclKernelTable mscclTable(Arena arena) {
        java.lang.foreign.ValueLayout.OfInt i32 = java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
        java.lang.foreign.ValueLayout.OfLong i64 = java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
        MemorySegment h = arena.allocate(64, 8);
        h.set(i32, 0, MscclTableLayout.MAGIC);
        h.set(i32, 4, 1);
        h.set(i32, 8, 2);
        h.set(i32, 12, 1);
        h.set(i64, 16, 4);
        h.set(i64, 24, 4);
        h.set(i32, 32, 1);
        h.set(i32, 36, 16);
        h.set(i64, 48, 1L << 32);
        h.set(i64, 56, 256);
        MemorySegment tbs = arena.allocate(192, 8);
        long[][] rec = {{0, 1, 0, 1, -1, 192, 152, -1, 0, 0, 0}, {1, 1, 1, 2, 192, -1, 216, 152, 64, 64, 64}};
        for (int b = 0; b < 2; b++) {
            long o = 96L * b;
            for (int f = 0; f < 4; f++) {
                tbs.set(i32, o + 4L * f, (int) rec[b][f]);
            }
            for (int f = 4; f < 11; f++) {
                tbs.set(i64, o + 16 + 8L * (f - 4), rec[b][f]);
            }
        }
        MemorySegment steps = arena.allocate(32, 8);
        byte[][] st = {{0, 0, (byte) 255, 0}, {1, (byte) 255, 1, 0}};
        for (int s = 0; s < 2; s++) {
            for (int k = 0; k < 4; k++) {
                steps.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 16L * s + k, st[s][k]);
            }
            steps.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, 16L * s + 8, (short) 1);
            steps.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, 16L * s + 10, (short) -1);
        }
        return dev.gdasync.ki.msccl.MscclKernelTable.of(h, tbs, steps, MSCCL_ARENA, arena);
    }

    /** A shmem KI state as Shmem.kiPrepare writes it, for this executor's view of the table (2 PEs). */
    private static MemorySegment shmemState(CudaKiExecutor executor, KiTable table, Arena arena, int blocks) {
        MemorySegment s = arena.allocate(dev.gdasync.gdsync.ki.ShmemKiLayout.bytes(2, blocks), 64);
        long tableDevice = ((dev.gdasync.gdsync.cuda.CudaAddressMap) executor.addresses()).deviceAddressOf(table.segment());
        s.set(java.lang.foreign.ValueLayout.JAVA_LONG, dev.gdasync.gdsync.ki.ShmemKiLayout.S_TABLE, tableDevice);
        s.set(java.lang.foreign.ValueLayout.JAVA_INT, dev.gdasync.gdsync.ki.ShmemKiLayout.S_N_PES, 2);
        s.set(java.lang.foreign.ValueLayout.JAVA_INT, dev.gdasync.gdsync.ki.ShmemKiLayout.S_BLOCKS, blocks);
        s.set(java.lang.foreign.ValueLayout.JAVA_INT, dev.gdasync.gdsync.ki.ShmemKiLayout.S_MAGIC,
                dev.gdasync.gdsync.ki.ShmemKiLayout.MAGIC);
        s.set(java.lang.foreign.ValueLayout.JAVA_INT, dev.gdasync.gdsync.ki.ShmemKiLayout.S_VERSION,
                dev.gdasync.gdsync.ki.ShmemKiLayout.VERSION);
        return s;
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

package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.ki.msccl.MscclKernelTable;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * One run of the kernel interpreter over all ranks of a program, for the GPU test and the host mirror's test: the
 * table {@link MscclDeviceTable#encode} writes, checked by {@link MscclKernelTable}, and the arena's host image with
 * every rank's int32 input written; after the run, every rank's output compared with the collective's definition
 * (SUM).
 */
final class MscclKernelCase {
    /** The reference programs (test resources, from msccl-tools). */
    static final List<String> REFERENCE = List.of("allreduce_ring_4gpu_simple.xml", "allreduce_rdh_4gpu_simple.xml",
            "allgather_ring_4gpu_simple.xml", "alltoall_allpairs_4gpu_simple.xml");
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;

    final MscclProgram program;
    final MscclDeviceTable.Encoded encoded;
    final MscclKernelTable table;
    final MemorySegment arena;
    private final long chunkElems;

    private MscclKernelCase(MscclProgram program, MscclDeviceTable.Encoded encoded, MscclKernelTable table,
                            MemorySegment arena, long chunkElems) {
        this.program = program;
        this.encoded = encoded;
        this.table = table;
        this.arena = arena;
        this.chunkElems = chunkElems;
    }

    /**
     * @param name a program of msccl/reference (read as a class-path resource, so it works from a test jar too)
     * @return the program
     */
    static MscclProgram reference(String name) {
        String path = "/msccl/reference/" + name;
        try (InputStream in = MscclKernelCase.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("test resource " + path + " is missing");
            }
            return new MscclParser(MscclLimits.defaults()).parse(in, path);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Encodes the program for int32 SUM with {@code chunkElems} elements per chunk and writes every rank's input.
     *
     * @param program    the program
     * @param chunkElems elements per chunk
     * @param slots      slots per connection
     * @param slotBytes  bytes per slot (sets the tile size)
     * @param memory     where the table and the arena are allocated
     * @return the case, ready to run
     */
    static MscclKernelCase of(MscclProgram program, long chunkElems, int slots, int slotBytes, Arena memory) {
        MscclDeviceTable.Encoded e = MscclDeviceTable.encode(program, DataType.INT32, ReduceOp.SUM,
                chunkElems * program.nchunksperloop(), slots, slotBytes, 1, memory);
        MscclKernelTable t = MscclKernelTable.of(e.header(), e.tbs(), e.steps(), e.layout().arenaBytes(), memory);
        MemorySegment arena = memory.allocate(e.layout().arenaBytes(), 64);
        MscclKernelCase c = new MscclKernelCase(program, e, t, arena, chunkElems);
        int n = program.ngpus();
        for (int r = 0; r < n; r++) {
            for (long i = 0; i < c.inElems(); i++) {
                arena.set(I32, e.layout().input()[r] + 4 * i, input(r, i));
            }
        }
        return c;
    }

    /**
     * Makes the first step that has a dependency wait for step 999 of that block, which it never reaches: a wait that
     * can never be met, in an otherwise valid table.
     *
     * @param e an encoded program with cross-block dependencies
     * @return the index of the changed step record
     */
    static int makeUnmeetable(MscclDeviceTable.Encoded e) {
        for (int s = 0; s < e.steps().byteSize() / MscclTableLayout.STEP_BYTES; s++) {
            if (e.steps().get(ValueLayout.JAVA_SHORT_UNALIGNED, 16L * s + 10) >= 0) {
                e.steps().set(ValueLayout.JAVA_SHORT_UNALIGNED, 16L * s + 12, (short) 999);
                return s;
            }
        }
        throw new AssertionError("the program has no cross-block dependency");
    }

    /** Rank r's input element i. */
    static int input(int r, long i) {
        return (r + 1) * 1_000_003 + (int) i * 7;
    }

    long tileElems() {
        return table.image().get(ValueLayout.JAVA_LONG_UNALIGNED, 16);
    }

    private long inElems() {
        return program.collective().inputChunks(program.nchunksperloop(), program.ngpus()) * chunkElems;
    }

    private long outElems() {
        return program.collective().outputChunks(program.nchunksperloop(), program.ngpus()) * chunkElems;
    }

    /** Rank r's expected output element i. */
    private int expected(int r, long i) {
        int n = program.ngpus();
        long in = inElems();
        return switch (program.collective()) {
            case ALLREDUCE -> sum(i);
            case REDUCE_SCATTER -> sum(r * outElems() + i);
            case ALLGATHER -> input((int) (i / in), i % in);
            case ALLTOALL -> input((int) (i / (in / n)), r * (in / n) + i % (in / n));
        };
    }

    private int sum(long i) {
        int s = 0;
        for (int q = 0; q < program.ngpus(); q++) {
            s += input(q, i);
        }
        return s;
    }

    /** @return every rank's wrong output elements (at most 5 named per rank), empty when all are exact */
    List<String> mismatches() {
        List<String> out = new ArrayList<>();
        for (int r = 0; r < program.ngpus(); r++) {
            int wrong = 0;
            for (long i = 0; i < outElems(); i++) {
                int got = arena.get(I32, encoded.layout().output()[r] + 4 * i);
                int want = expected(r, i);
                if (got != want && wrong++ < 5) {
                    out.add("rank " + r + " output[" + i + "] = " + got + ", expected " + want);
                }
            }
            if (wrong > 5) {
                out.add("rank " + r + ": " + wrong + " wrong elements in all");
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return program.name() + " (" + chunkElems + " elements a chunk, tiles of " + tileElems() + ")";
    }
}

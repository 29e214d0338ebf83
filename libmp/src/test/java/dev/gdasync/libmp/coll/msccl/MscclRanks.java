package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.testutil.ThreadRanks;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Runs a job's ranks as threads of this JVM, each with its Collectives and an MSCCL runtime. */
final class MscclRanks {
    interface Body {
        void run(Collectives coll, MscclRuntime rt) throws Exception;
    }

    private MscclRanks() {
    }

    static void run(int n, Path base, MscclPrograms programs, MscclConfig config, Body body) throws Exception {
        run(n, MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base)), programs, config, body);
    }

    /** As {@link #run(int, Path, MscclPrograms, MscclConfig, Body)}, on Mps of this configuration (20 s waits). */
    static void run(int n, MpConfig mpConfig, MscclPrograms programs, MscclConfig config, Body body) throws Exception {
        MpConfig c = mpConfig.withWaitTimeout(Duration.ofSeconds(20));
        ThreadRanks.run(n, c, "msccl-rank", Duration.ofSeconds(180), mp -> {
            try (Collectives coll = Collectives.open(mp); MscclRuntime rt = MscclRuntime.open(coll, programs, config)) {
                body.run(coll, rt);
            }
        });
    }

    /** The four msccl-tools programs under msccl/reference/, each run on 4 ranks. */
    static final String[] REFERENCE = {"allreduce_ring_4gpu_simple.xml", "allreduce_rdh_4gpu_simple.xml",
            "allgather_ring_4gpu_simple.xml", "alltoall_allpairs_4gpu_simple.xml"};

    /** Each reference program with slots of 8 B (one element per tile), 200 B and 64 KiB (the whole chunk). */
    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> referenceCases() {
        List<org.junit.jupiter.params.provider.Arguments> a = new java.util.ArrayList<>();
        for (String p : REFERENCE) {
            for (int slot : new int[] {8, 200, 64 * 1024}) {
                a.add(org.junit.jupiter.params.provider.Arguments.of(p, slot));
            }
        }
        return a.stream();
    }

    /** Asserts that the first {@code count} doubles of {@code a} have the same bits on every rank (uses an allgather). */
    static void assertSameBitsEverywhere(MscclRuntime rt, dev.gdasync.libmp.coll.Communicator comm,
                                         java.lang.foreign.MemorySegment a, dev.gdasync.libmp.MpRegistration ar,
                                         long count) {
        dev.gdasync.libmp.Mp mp = comm.collectives().mp();
        int n = comm.size();
        java.lang.foreign.MemorySegment gathered = mp.allocate(8 * count * n);
        dev.gdasync.libmp.MpRegistration gr = mp.register(gathered);
        rt.allgather(comm, a.asSlice(0, 8 * count), ar, gathered, gr, count,
                dev.gdasync.libmp.coll.reduce.DataType.INT64);
        for (int r = 1; r < n; r++) {
            for (long i = 0; i < count; i++) {
                org.junit.jupiter.api.Assertions.assertEquals(
                        gathered.getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i),
                        gathered.getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, r * count + i),
                        "bits of element " + i + " on rank " + r);
            }
        }
        mp.deregister(gr);
        mp.free(gathered);
    }

    /** A test resource under msccl/. */
    static Path resource(String name) {
        try {
            return Path.of(MscclRanks.class.getResource("/msccl/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static MscclPrograms load(String... names) {
        return MscclPrograms.load(java.util.Arrays.stream(names).map(MscclRanks::resource).toList(),
                MscclLimits.defaults());
    }

    static List<Path> paths(String... names) {
        return java.util.Arrays.stream(names).map(MscclRanks::resource).toList();
    }
}

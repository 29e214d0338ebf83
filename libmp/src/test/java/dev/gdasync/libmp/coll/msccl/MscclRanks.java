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
        MpConfig mpConfig = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base))
                .withWaitTimeout(Duration.ofSeconds(20));
        ThreadRanks.run(n, mpConfig, "msccl-rank", Duration.ofSeconds(180), mp -> {
            try (Collectives coll = Collectives.open(mp); MscclRuntime rt = MscclRuntime.open(coll, programs, config)) {
                body.run(coll, rt);
            }
        });
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

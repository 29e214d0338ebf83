package dev.gdasync.apps.hpgmg;

import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.io.PrintStream;
import java.util.List;

/** {@code mpj}: the same solver with MPJ Express Isend/Irecv/Waitall, in MPJ Express's own JVM. */
final class MpjRunner {
    private MpjRunner() {
    }

    static List<String> run(EnvBootstrap boot, HpgmgCommand o, ProblemSize size, PrintStream out) {
        throw new IllegalStateException("--mode mpj is not available yet");
    }
}

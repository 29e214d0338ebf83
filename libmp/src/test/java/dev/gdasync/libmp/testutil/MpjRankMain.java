package dev.gdasync.libmp.testutil;

import dev.gdasync.libmp.bootstrap.MpjBootstrap;
import mpi.MPI;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A rank under MPJ Express (started by its starter.jar; with the multicore device every rank is a
 * thread of one JVM). Prints "mpj rank R of N job J gathered [...] empty E" and "mpj done R".
 */
public final class MpjRankMain {
    private MpjRankMain() {
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        try (MpjBootstrap boot = MpjBootstrap.fromWorld()) {
            int me = boot.rank();
            List<String> got = new ArrayList<>();
            for (byte[] b : boot.allGather(RankMain.contribution(me).getBytes(StandardCharsets.UTF_8))) {
                got.add(RankMain.summary(new String(b, StandardCharsets.UTF_8)));
            }
            boot.barrier();
            int empty = 0;
            for (byte[] b : boot.allGather(new byte[0])) {
                empty += b.length;
            }
            System.out.println("mpj rank " + me + " of " + boot.size() + " job " + boot.jobId() + " gathered " + got
                    + " empty " + empty);
            boot.barrier();
            System.out.println("mpj done " + me);
        }
        MPI.Finalize();
    }
}

package dev.gdasync.apps.common;

import dev.gdasync.libmp.bootstrap.Bootstrap;

import java.io.IOException;
import java.util.List;

/**
 * Rank 0 works alone (runs a {@link ChildJob}, measures) while the other ranks wait for it in the bootstrap: rank 0
 * beats every half second or so ({@link #beat}) and says when it is done ({@link #end}); the others wait in
 * {@link #awaitEnd}. Each beat is an all-gather of the job's bootstrap in which only rank 0's byte counts, so the
 * waiting ranks block in a socket read (the CPUs stay free) and no wait lasts long enough to time out, as one plain
 * barrier over a long run would.
 */
public final class RootHeartbeat {
    /** What rank 0 does while the others wait. */
    @FunctionalInterface
    public interface Work<T> {
        /**
         * @param heartbeat to call at least every half second
         * @return the work's result
         * @throws IOException          as the work may
         * @throws InterruptedException as the work may
         */
        T run(Runnable heartbeat) throws IOException, InterruptedException;
    }

    private final Bootstrap boot;
    private final String app;

    /**
     * @param boot the job's bootstrap
     * @param app  the app's name, for the message when the ranks disagree
     */
    public RootHeartbeat(Bootstrap boot, String app) {
        this.boot = boot;
        this.app = app;
    }

    /**
     * A collective: rank 0 runs the work with its heartbeat, then ends; the other ranks wait for the end.
     *
     * @param work what rank 0 does
     * @param <T>  its result's type
     * @return the work's result on rank 0, null on the others
     * @throws IOException          as the work may
     * @throws InterruptedException as the work may
     */
    public <T> T onRankZero(Work<T> work) throws IOException, InterruptedException {
        if (boot.rank() != 0) {
            awaitEnd();
            return null;
        }
        try {
            return work.run(this::beat);
        } finally {
            end();
        }
    }

    /** Rank 0: still working. */
    public void beat() {
        say(true);
    }

    /** Rank 0: done; the waiting ranks return from {@link #awaitEnd}. */
    public void end() {
        say(false);
    }

    /** The other ranks: waits through rank 0's beats until it ends. */
    public void awaitEnd() {
        while (say(false)) {
            // Rank 0 is still working.
        }
    }

    /** @return rank 0's word, on every rank (only rank 0's {@code mine} counts) */
    private boolean say(boolean mine) {
        List<byte[]> all = boot.allGather(boot.rank() == 0 ? new byte[]{(byte) (mine ? 1 : 0)} : new byte[0]);
        byte[] root = all.getFirst();
        if (root.length != 1) {
            throw new IllegalStateException("rank 0 sent no decision: are all ranks running " + app
                    + " with the same arguments?");
        }
        return root[0] == 1;
    }
}

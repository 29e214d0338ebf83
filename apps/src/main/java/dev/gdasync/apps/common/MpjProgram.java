package dev.gdasync.apps.common;

import mpi.MPI;

/**
 * The main of an MPJ Express program that {@link MpjStarter} runs as a child job: MPJ's init, the program, MPJ's
 * finalize. A rank that fails prints the job's error tag, its rank and the failure on standard error ({@link ChildJob}
 * fails the job with it) and ends the JVM with status 3: with the multicore device the ranks are threads of one JVM,
 * and a rank that only threw would leave the others blocked in their next collective. A failed {@code MPI.Init} ends
 * the same way ({@link NiodevStarter}'s ranks run under MPJ's Wrapper, which would swallow it).
 */
public final class MpjProgram {
    /** The program itself. */
    @FunctionalInterface
    public interface Body {
        /**
         * @param args the program's arguments, MPJ's own taken out
         * @throws Exception a failure of this rank
         */
        void run(String[] args) throws Exception;
    }

    private MpjProgram() {
    }

    /**
     * Runs the program as this rank.
     *
     * @param args     the main's arguments, MPJ's first
     * @param errorTag the first word of the error line ({@code "COMD-MPJ-ERROR"})
     * @param body     the program
     */
    public static void main(String[] args, String errorTag, Body body) {
        String[] mine;
        try {
            mine = MPI.Init(args);
        } catch (Throwable t) {
            // MPJ's Wrapper (niodev) would catch this, print it and let the JVM end well: say it and fail instead.
            System.err.println(errorTag + " MPI.Init failed: " + t);
            System.err.flush();
            System.exit(3);
            return;
        }
        try {
            body.run(mine);
        } catch (Throwable t) {
            System.err.println(errorTag + " rank " + MPI.COMM_WORLD.Rank() + ": " + t);
            System.err.flush();
            System.exit(3);
        }
        MPI.Finalize();
    }
}

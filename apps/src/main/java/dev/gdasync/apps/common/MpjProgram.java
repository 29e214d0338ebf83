package dev.gdasync.apps.common;

import mpi.MPI;

/**
 * The main of an MPJ Express program that {@link MpjStarter} runs as a child job: MPJ's init, the program, MPJ's
 * finalize. A rank that fails prints the job's error tag, its rank and the failure on standard error ({@link ChildJob}
 * fails the job with it) and ends the JVM with status 3: with the multicore device the ranks are threads of one JVM,
 * and a rank that only threw would leave the others blocked in their next collective.
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
        String[] mine = MPI.Init(args);
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

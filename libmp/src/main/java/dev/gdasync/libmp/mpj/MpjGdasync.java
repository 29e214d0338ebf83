package dev.gdasync.libmp.mpj;

import dev.gdasync.libmp.Mp;

/**
 * Where a program that runs MPJ Express over gdasync finds the gdasync side of its process.
 */
public final class MpjGdasync {
    private static volatile GdasyncDevice device;

    private MpjGdasync() {
    }

    static void installed(GdasyncDevice d) {
        device = d;
    }

    /** @return the device of this process while MPJ Express runs over gdasync, else null */
    static GdasyncDevice device() {
        return device;
    }

    /** @return whether MPJ Express runs over gdasync in this process ({@code MPI.Init} done, not yet finalized) */
    public static boolean active() {
        return device != null;
    }

    /**
     * @return the Mp MPJ's messages travel over, for the program's own libmp calls beside MPJ's (two-sided and
     *         one-sided, on the CPU and on streams, and the layers built on them: shmem, the collectives of
     *         {@code coll}, global arrays): the device puts its fragments one-sided and posts no receives; the calls
     *         that stream-trigger MPJ's own messages are {@link MpjOnStream}'s
     * @throws IllegalStateException if MPJ Express does not run over gdasync here
     */
    public static Mp mp() {
        GdasyncDevice d = device;
        if (d == null) {
            throw new IllegalStateException("MPJ Express does not run over gdasync in this process: start it with "
                    + "scripts/mprun --mpj and call MPI.Init first");
        }
        return d.mp();
    }

    /**
     * Aborts the job (what {@code MPI.COMM_WORLD.Abort} should do: MPJ Express 0.44's {@code Comm.Abort} returns
     * without doing anything): every rank's pending and later MPJ calls fail with an exception naming this rank and
     * the reason, this rank's too. The processes go on; ending them is the program's call.
     *
     * @param reason why, for every rank's messages
     * @throws NullPointerException  if the reason is null
     * @throws IllegalStateException if MPJ Express does not run over gdasync here
     */
    public static void abort(String reason) {
        java.util.Objects.requireNonNull(reason, "reason must not be null");
        mp().abort(reason);
    }
}

package dev.gdasync.apps.comd;

import java.util.Locale;

/** The communication models of the halo exchange and the redistribution. */
enum Mode {
    /** MPJ Express {@code Sendrecv}, as CoMD's sendReceiveParallel: the MPI baseline, in JVMs of its own. */
    MPJ,
    /** libmp on the CPU: receives posted a round ahead, {@code isend}, {@code wait}. */
    HOST,
    /** Stream-asynchronous: a host stream runs the steps, packs, rings the sends and waits for the receives. */
    SA,
    /** Kernel-initiated: each axis exchange is one fused kernel on the host KI executor. */
    KI;

    /** @return the name on the command line */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @return the mode of a label */
    static Mode of(String label) {
        for (Mode m : values()) {
            if (m.label().equals(label)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown mode '" + label + "' (mpj, host, sa or ki)");
    }
}

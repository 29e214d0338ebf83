package dev.gdasync.apps.common;

import java.util.Map;

/**
 * This process's rank and the job's size as the launcher set them ({@code scripts/mprun}, Open MPI's {@code mpirun},
 * Slurm), read before the bootstrap starts: every rank got the same command line, and only rank 0 speaks about it
 * (usage, option errors), so a wrong option is reported once, not once per rank.
 */
public final class LauncherRank {
    private static final String[] RANK = {"GDASYNC_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
    private static final String[] SIZE = {"GDASYNC_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"};

    private LauncherRank() {
    }

    /** @return this rank as scripts/mprun, Open MPI or Slurm set it, or -1 when none did or it is unreadable */
    public static int rank() {
        return first(System.getenv(), RANK);
    }

    /** @return the job's ranks as scripts/mprun, Open MPI or Slurm set them, or -1 when none did or it is unreadable */
    public static int size() {
        return first(System.getenv(), SIZE);
    }

    /**
     * @return whether this process speaks for the job: rank 0, or a process not started as a rank (or with a rank
     *         that is not a number, which the bootstrap then reports)
     */
    public static boolean speaksForJob() {
        return rank() <= 0;
    }

    /**
     * @param env   the environment
     * @param names the variables to look at, in order
     * @return the first one set, as a number, or -1 when none is set or the first set is not a number
     */
    static int first(Map<String, String> env, String... names) {
        for (String name : names) {
            String v = env.get(name);
            if (v != null) {
                try {
                    return Integer.parseInt(v.strip());
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }
}

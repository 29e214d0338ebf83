package dev.gdasync.libmp.bootstrap;

/**
 * The environment variables of a gdasync job, named once: those the launcher ({@code scripts/mprun}, the launcher
 * jar) sets for every rank and for the collective proxies, and those the library reads. The launcher and the library
 * both take the names from here, so neither depends on the other for them.
 */
public final class EnvNames {
    /** This process's rank, 0-based. */
    public static final String RANK = "GDASYNC_RANK";
    /** The job's rank count. */
    public static final String SIZE = "GDASYNC_SIZE";
    /** {@code host:port} where rank 0 listens for the bootstrap's rendezvous. */
    public static final String RENDEZVOUS = "GDASYNC_RENDEZVOUS";
    /** The job's secret, hex. */
    public static final String SECRET = "GDASYNC_SECRET";
    /** A file holding the job's secret as hex, readable by its owner only. */
    public static final String SECRET_FILE = "GDASYNC_SECRET_FILE";
    /** The job's id. */
    public static final String JOB_ID = "GDASYNC_JOB_ID";
    /** How long the rendezvous and each bootstrap collective may take, in milliseconds. */
    public static final String BOOTSTRAP_TIMEOUT_MS = "GDASYNC_BOOTSTRAP_TIMEOUT_MS";
    /** The network namespace (one per simulated host) a rank runs in. */
    public static final String NETNS = "GDASYNC_NETNS";
    /** The address of the rank's network namespace. */
    public static final String NETNS_ADDRESS = "GDASYNC_NETNS_ADDRESS";
    /** The script that makes and removes the network namespaces. */
    public static final String NETNS_SCRIPT = "GDASYNC_NETNS_SCRIPT";
    /** The program's class path when the launcher is given none. */
    public static final String CLASSPATH = "GDASYNC_CLASSPATH";
    /** Which engine {@code Collectives.open} uses: {@code host} or {@code offload}. */
    public static final String COLL_ENGINE = "GDASYNC_COLL_ENGINE";
    /** Whether the built-in collectives take their shared-memory path ({@code 0} turns it off). */
    public static final String COLL_SHM = "GDASYNC_COLL_SHM";
    /** MSCCL-IR programs to load at start. */
    public static final String MSCCL_XML = "GDASYNC_MSCCL_XML";
    /** Where a rank finds its host's collective proxy. */
    public static final String COLL_PROXY = "GDASYNC_COLL_PROXY";
    /** The proxies' placement: which host every rank is on. */
    public static final String COLL_PLACEMENT = "GDASYNC_COLL_PLACEMENT";
    /** The host a collective proxy serves. */
    public static final String COLL_HOST = "GDASYNC_COLL_HOST";
    /** Where the collective proxies of a job spanning hosts meet. */
    public static final String COLL_RENDEZVOUS = "GDASYNC_COLL_RENDEZVOUS";

    private EnvNames() {
    }
}

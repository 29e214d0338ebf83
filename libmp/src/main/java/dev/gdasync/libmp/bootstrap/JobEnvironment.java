package dev.gdasync.libmp.bootstrap;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;

/**
 * Where a rank stands in its job, as {@link EnvBootstrap} needs it: rank, size, the rendezvous at
 * rank 0, the job's secret, the job id and the timeout.
 *
 * <p>{@link #parse(Map)} reads it from environment variables:
 * <ul>
 * <li>rank and size, from the first of these that is present: {@code GDASYNC_RANK}/{@code GDASYNC_SIZE}
 * (set by {@code scripts/mprun}), {@code OMPI_COMM_WORLD_RANK}/{@code OMPI_COMM_WORLD_SIZE} (Open MPI's
 * {@code mpirun}), {@code SLURM_PROCID}/{@code SLURM_NTASKS} ({@code srun}). Open MPI comes before Slurm
 * because {@code mpirun} inside a Slurm allocation leaves the allocation's {@code SLURM_*} variables
 * (those of its per-node daemons) in every rank's environment;</li>
 * <li>{@code GDASYNC_RENDEZVOUS=host:port} (IPv6 as {@code [addr]:port}): rank 0 listens there;</li>
 * <li>{@code GDASYNC_SECRET} (hex, at least 16 bytes) or {@code GDASYNC_SECRET_FILE} (a file holding
 * that hex, readable by its owner only);</li>
 * <li>{@code GDASYNC_JOB_ID}, else {@code ompi-<OMPI_MCA_ess_base_jobid>} or {@code ompi-<PMIX_NAMESPACE>},
 * else {@code slurm-<SLURM_JOB_ID>.<SLURM_STEP_ID>}, else {@code job-} and 16 hex digits of
 * HMAC-SHA256(secret, rendezvous) (the same on every rank, different for every secret);</li>
 * <li>{@code GDASYNC_BOOTSTRAP_TIMEOUT_MS}, default 60000: how long the rendezvous and each collective
 * may take.</li>
 * </ul>
 * A job of one rank needs neither rendezvous nor secret.
 */
public final class JobEnvironment {
    /** The timeout when {@code GDASYNC_BOOTSTRAP_TIMEOUT_MS} is not set. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private final int rank;
    private final int size;
    private final String source;
    private final String host;
    private final int port;
    private final byte[] secret;
    private final String jobId;
    private final Duration timeout;

    private JobEnvironment(int rank, int size, String source, String host, int port, byte[] secret, String jobId,
                           Duration timeout) {
        this.rank = rank;
        this.size = size;
        this.source = source;
        this.host = host;
        this.port = port;
        this.secret = secret;
        this.jobId = jobId;
        this.timeout = timeout;
    }

    /**
     * Explicit values, for tests and embedding.
     *
     * @param rank       this rank, in [0, size)
     * @param size       the number of ranks
     * @param rendezvous {@code host:port} where rank 0 listens (may be null when size is 1)
     * @param secret     the job's secret, at least 16 bytes (may be null when size is 1)
     * @param jobId      the job id
     * @param timeout    how long the rendezvous and each collective may take
     * @return the environment
     */
    public static JobEnvironment of(int rank, int size, String rendezvous, byte[] secret, String jobId, Duration timeout) {
        checkRankSize(rank, size, "rank " + rank + " of " + size);
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new BootstrapException("the bootstrap timeout must be positive, not " + timeout);
        }
        JobIds.require(jobId, "job id");
        String host = null;
        int port = 0;
        if (size > 1) {
            if (rendezvous == null) {
                throw new BootstrapException("a job of " + size + " ranks needs a rendezvous host:port");
            }
            if (secret == null || secret.length < Secrets.MIN_BYTES) {
                throw new BootstrapException("a job of " + size + " ranks needs a secret of at least " + Secrets.MIN_BYTES + " bytes");
            }
            int colon = rendezvous.lastIndexOf(':');
            host = parseHost(rendezvous, colon, "rendezvous");
            port = parsePort(rendezvous, colon, "rendezvous");
        }
        return new JobEnvironment(rank, size, "explicit values", host, port, secret == null ? null : secret.clone(),
                jobId, timeout);
    }

    /**
     * Reads this process's environment.
     *
     * @return the environment
     * @throws BootstrapException naming the variable that is missing or malformed
     */
    public static JobEnvironment fromEnvironment() {
        return parse(System.getenv());
    }

    /**
     * Reads the variables described in the class comment.
     *
     * @param env the variables
     * @return the environment
     * @throws BootstrapException naming the variable that is missing or malformed
     */
    public static JobEnvironment parse(Map<String, String> env) {
        String[] names = rankSizeNames(env);
        String source = names[2];
        int rank = parseInt(env, names[0]);
        int size = parseInt(env, names[1]);
        checkRankSize(rank, size, source + " (" + names[0] + "=" + rank + ", " + names[1] + "=" + size + ")");
        Duration timeout = DEFAULT_TIMEOUT;
        String t = value(env, EnvNames.BOOTSTRAP_TIMEOUT_MS);
        if (t != null) {
            long ms = parseLong(t, EnvNames.BOOTSTRAP_TIMEOUT_MS);
            if (ms <= 0) {
                throw new BootstrapException("GDASYNC_BOOTSTRAP_TIMEOUT_MS=" + t + " must be a positive number of milliseconds");
            }
            timeout = Duration.ofMillis(ms);
        }
        String rendezvous = value(env, EnvNames.RENDEZVOUS);
        byte[] secret = readSecret(env);
        if (size > 1 && rendezvous == null) {
            throw new BootstrapException("GDASYNC_RENDEZVOUS is not set: the " + size + " ranks from " + source
                    + " meet at a TCP rendezvous on rank 0's host; set GDASYNC_RENDEZVOUS=host:port to rank 0's host"
                    + " and a free port on every rank (in a Slurm batch script: export GDASYNC_RENDEZVOUS=$(hostname):PORT)");
        }
        if (size > 1 && secret == null) {
            throw new BootstrapException("no job secret: set GDASYNC_SECRET to at least " + Secrets.MIN_BYTES
                    + " random bytes in hex (for example export GDASYNC_SECRET=$(openssl rand -hex 32)) or"
                    + " GDASYNC_SECRET_FILE to a file holding them, the same on every rank");
        }
        String host = null;
        int port = 0;
        if (rendezvous != null) {
            int colon = rendezvous.lastIndexOf(':');
            host = parseHost(rendezvous, colon, EnvNames.RENDEZVOUS);
            port = parsePort(rendezvous, colon, EnvNames.RENDEZVOUS);
        }
        String jobId = jobId(env, rendezvous, secret);
        return new JobEnvironment(rank, size, source, host, port, secret, jobId, timeout);
    }

    private static String[] rankSizeNames(Map<String, String> env) {
        String[][] sources = {
                {EnvNames.RANK, EnvNames.SIZE, "the gdasync launcher"},
                {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun"},
                {"SLURM_PROCID", "SLURM_NTASKS", "Slurm"},
        };
        for (String[] s : sources) {
            boolean hasRank = value(env, s[0]) != null;
            boolean hasSize = value(env, s[1]) != null;
            if (hasRank && hasSize) {
                return s;
            }
            if (hasRank || hasSize) {
                throw new BootstrapException((hasRank ? s[0] : s[1]) + " is set but " + (hasRank ? s[1] : s[0])
                        + " is not: " + s[2] + " sets both");
            }
        }
        throw new BootstrapException("no rank and size in the environment: start the ranks with scripts/mprun,"
                + " srun (SLURM_PROCID/SLURM_NTASKS) or Open MPI's mpirun (OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE),"
                + " or set GDASYNC_RANK and GDASYNC_SIZE");
    }

    private static byte[] readSecret(Map<String, String> env) {
        String hex = value(env, EnvNames.SECRET);
        String file = value(env, EnvNames.SECRET_FILE);
        if (hex != null && file != null) {
            throw new BootstrapException("both GDASYNC_SECRET and GDASYNC_SECRET_FILE are set; set only one");
        }
        if (hex != null) {
            return Secrets.parseHex(hex, EnvNames.SECRET);
        }
        return file == null ? null : Secrets.readFile(Path.of(file), EnvNames.SECRET_FILE);
    }

    private static String jobId(Map<String, String> env, String rendezvous, byte[] secret) {
        String given = value(env, EnvNames.JOB_ID);
        if (given != null) {
            return JobIds.require(given, EnvNames.JOB_ID);
        }
        String ompi = value(env, "OMPI_MCA_ess_base_jobid");
        if (ompi == null) {
            ompi = value(env, "PMIX_NAMESPACE");
        }
        if (ompi != null && value(env, "OMPI_COMM_WORLD_RANK") != null) {
            return JobIds.sanitize("ompi-" + ompi);
        }
        String slurmJob = value(env, "SLURM_JOB_ID") != null ? value(env, "SLURM_JOB_ID") : value(env, "SLURM_JOBID");
        if (slurmJob != null) {
            String step = value(env, "SLURM_STEP_ID") != null ? value(env, "SLURM_STEP_ID") : value(env, "SLURM_STEPID");
            return JobIds.sanitize("slurm-" + slurmJob + (step == null ? "" : "." + step));
        }
        if (secret == null) {
            return JobIds.random("single"); // one rank: nobody to agree with
        }
        byte[] mac = Secrets.hmac(secret, "gdasync job id\0".getBytes(StandardCharsets.UTF_8),
                String.valueOf(rendezvous).getBytes(StandardCharsets.UTF_8));
        return "job-" + HexFormat.of().formatHex(mac, 0, 8);
    }

    private static void checkRankSize(int rank, int size, String what) {
        if (size < 1) {
            throw new BootstrapException(what + ": the size must be at least 1");
        }
        if (rank < 0 || rank >= size) {
            throw new BootstrapException(what + ": the rank must be in [0, " + size + ")");
        }
    }

    private static String value(Map<String, String> env, String name) {
        String v = env.get(name);
        return v == null || v.isBlank() ? null : v.strip();
    }

    private static int parseInt(Map<String, String> env, String name) {
        long v = parseLong(value(env, name), name);
        if (v > Integer.MAX_VALUE) {
            throw new BootstrapException(name + "=" + v + " is too large");
        }
        return (int) v;
    }

    private static long parseLong(String text, String name) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new BootstrapException(name + "='" + text + "' is not a whole number");
        }
    }

    private static String parseHost(String hostPort, int colon, String name) {
        String host = colon < 0 ? "" : hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty() || (host.contains(":") && !hostPort.startsWith("["))) {
            throw new BootstrapException(name + "='" + hostPort + "' is not host:port (write an IPv6 address as [addr]:port)");
        }
        return host;
    }

    private static int parsePort(String hostPort, int colon, String name) {
        String p = hostPort.substring(colon + 1);
        int port;
        try {
            port = Integer.parseInt(p);
        } catch (NumberFormatException e) {
            throw new BootstrapException(name + "='" + hostPort + "' is not host:port: '" + p + "' is not a port number");
        }
        if (port < 1 || port > 65535) {
            throw new BootstrapException(name + "='" + hostPort + "': port " + port + " is outside 1-65535");
        }
        return port;
    }

    /** @return this rank, in [0, size) */
    public int rank() {
        return rank;
    }

    /** @return the number of ranks */
    public int size() {
        return size;
    }

    /** @return where rank and size came from, for messages (for example "Slurm") */
    public String source() {
        return source;
    }

    /** @return rank 0's host, or null in a job of one rank without a rendezvous */
    public String host() {
        return host;
    }

    /** @return rank 0's port, or 0 in a job of one rank without a rendezvous */
    public int port() {
        return port;
    }

    /** @return {@code host:port}, or null */
    public String rendezvous() {
        return host == null ? null : (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    /** @return a copy of the job's secret, or null in a job of one rank without one */
    public byte[] secret() {
        return secret == null ? null : secret.clone();
    }

    /** @return the job id */
    public String jobId() {
        return jobId;
    }

    /** @return how long the rendezvous and each collective may take */
    public Duration timeout() {
        return timeout;
    }

    /** The secret is never printed. */
    @Override
    public String toString() {
        return "JobEnvironment{rank " + rank + " of " + size + " from " + source + ", rendezvous " + rendezvous()
                + ", job " + jobId + ", timeout " + timeout.toMillis() + " ms}";
    }
}

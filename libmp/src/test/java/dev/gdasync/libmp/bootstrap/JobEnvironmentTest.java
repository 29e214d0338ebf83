package dev.gdasync.libmp.bootstrap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JobEnvironmentTest {
    static final String SECRET = "00112233445566778899aabbccddeeff";

    static Map<String, String> env(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static Map<String, String> withRendezvous(String... kv) {
        Map<String, String> m = env(kv);
        m.putIfAbsent("GDASYNC_RENDEZVOUS", "node1:4242");
        m.putIfAbsent("GDASYNC_SECRET", SECRET);
        return m;
    }

    static String error(Map<String, String> env) {
        return assertThrows(BootstrapException.class, () -> JobEnvironment.parse(env)).getMessage();
    }

    @Test
    void launcherVariables() {
        JobEnvironment e = JobEnvironment.parse(withRendezvous("GDASYNC_RANK", "1", "GDASYNC_SIZE", "4",
                "GDASYNC_JOB_ID", "mprun-abc", "GDASYNC_BOOTSTRAP_TIMEOUT_MS", "1500"));
        assertEquals(1, e.rank());
        assertEquals(4, e.size());
        assertEquals("the gdasync launcher", e.source());
        assertEquals("node1", e.host());
        assertEquals(4242, e.port());
        assertEquals("node1:4242", e.rendezvous());
        assertEquals("mprun-abc", e.jobId());
        assertEquals(Duration.ofMillis(1500), e.timeout());
        assertArrayEquals(java.util.HexFormat.of().parseHex(SECRET), e.secret());
        assertFalse(e.toString().contains(SECRET), "the secret must not be printed");
    }

    @Test
    void slurmVariablesAndJobId() {
        JobEnvironment e = JobEnvironment.parse(withRendezvous("SLURM_PROCID", "3", "SLURM_NTASKS", "8",
                "SLURM_JOB_ID", "12345", "SLURM_STEP_ID", "2"));
        assertEquals(3, e.rank());
        assertEquals(8, e.size());
        assertEquals("Slurm", e.source());
        assertEquals("slurm-12345.2", e.jobId());
        assertEquals(JobEnvironment.DEFAULT_TIMEOUT, e.timeout());
    }

    @Test
    void openMpiVariablesAndJobId() {
        JobEnvironment e = JobEnvironment.parse(withRendezvous("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2",
                "OMPI_MCA_ess_base_jobid", "2950430721"));
        assertEquals("Open MPI's mpirun", e.source());
        assertEquals("ompi-2950430721", e.jobId());
        JobEnvironment five = JobEnvironment.parse(withRendezvous("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2",
                "PMIX_NAMESPACE", "prterun-node1-4711@1"));
        assertEquals("ompi-prterun-node1-4711_1", five.jobId());
    }

    @Test
    void precedenceIsLauncherThenOpenMpiThenSlurm() {
        Map<String, String> all = withRendezvous("GDASYNC_RANK", "1", "GDASYNC_SIZE", "2",
                "OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "5", "SLURM_PROCID", "0", "SLURM_NTASKS", "1");
        assertEquals("the gdasync launcher", JobEnvironment.parse(all).source());
        all.remove("GDASYNC_RANK");
        all.remove("GDASYNC_SIZE");
        JobEnvironment ompi = JobEnvironment.parse(all);
        assertEquals("Open MPI's mpirun", ompi.source());
        assertEquals(3, ompi.rank());
        assertEquals(5, ompi.size());
    }

    @Test
    void derivedJobIdIsTheSameOnEveryRankAndDiffersBySecret() {
        String a = JobEnvironment.parse(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2")).jobId();
        String b = JobEnvironment.parse(withRendezvous("GDASYNC_RANK", "1", "GDASYNC_SIZE", "2")).jobId();
        String c = JobEnvironment.parse(withRendezvous("GDASYNC_RANK", "1", "GDASYNC_SIZE", "2",
                "GDASYNC_SECRET", SECRET.replace('0', '1'))).jobId();
        assertEquals(a, b);
        assertNotEquals(a, c);
        assertTrue(a.matches("job-[0-9a-f]{16}"), a);
    }

    @Test
    void missingOrMalformedRankAndSize() {
        assertTrue(error(env()).startsWith("no rank and size in the environment"));
        assertEquals("GDASYNC_RANK is set but GDASYNC_SIZE is not: the gdasync launcher sets both",
                error(env("GDASYNC_RANK", "0")));
        assertEquals("SLURM_NTASKS is set but SLURM_PROCID is not: Slurm sets both", error(env("SLURM_NTASKS", "2")));
        assertEquals("GDASYNC_RANK='abc' is not a whole number",
                error(withRendezvous("GDASYNC_RANK", "abc", "GDASYNC_SIZE", "2")));
        assertTrue(error(withRendezvous("GDASYNC_RANK", "2", "GDASYNC_SIZE", "2"))
                .contains("the rank must be in [0, 2)"));
        assertTrue(error(withRendezvous("GDASYNC_RANK", "-1", "GDASYNC_SIZE", "2"))
                .contains("the rank must be in [0, 2)"));
        assertTrue(error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "0"))
                .contains("the size must be at least 1"));
        assertEquals("GDASYNC_BOOTSTRAP_TIMEOUT_MS=0 must be a positive number of milliseconds",
                error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_BOOTSTRAP_TIMEOUT_MS", "0")));
    }

    @Test
    void rendezvousAndSecretAreRequiredAndChecked() {
        assertTrue(error(env("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_SECRET", SECRET))
                .startsWith("GDASYNC_RENDEZVOUS is not set"));
        assertTrue(error(env("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_RENDEZVOUS", "h:1"))
                .startsWith("no job secret"));
        assertTrue(error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_SECRET", "abcd"))
                .startsWith("GDASYNC_SECRET holds 2 bytes; a job secret needs at least 16"));
        assertTrue(error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_SECRET", "zz" + SECRET))
                .startsWith("GDASYNC_SECRET is not a hex string"));
        assertTrue(error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_SECRET_FILE", "/x"))
                .startsWith("both GDASYNC_SECRET and GDASYNC_SECRET_FILE are set"));
        assertEquals("GDASYNC_RENDEZVOUS='node1' is not host:port (write an IPv6 address as [addr]:port)",
                error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_RENDEZVOUS", "node1")));
        assertEquals("GDASYNC_RENDEZVOUS='node1:http' is not host:port: 'http' is not a port number",
                error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_RENDEZVOUS", "node1:http")));
        assertEquals("GDASYNC_RENDEZVOUS='node1:70000': port 70000 is outside 1-65535",
                error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_RENDEZVOUS", "node1:70000")));
        assertTrue(error(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_JOB_ID", "a/b"))
                .startsWith("GDASYNC_JOB_ID='a/b' is not a valid job id"));
        JobEnvironment v6 = JobEnvironment.parse(withRendezvous("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2",
                "GDASYNC_RENDEZVOUS", "[::1]:5000"));
        assertEquals("::1", v6.host());
        assertEquals("[::1]:5000", v6.rendezvous());
    }

    @Test
    void secretFileMustBePrivate(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("secret");
        Files.writeString(f, SECRET + "\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        Map<String, String> env = env("GDASYNC_RANK", "0", "GDASYNC_SIZE", "2", "GDASYNC_RENDEZVOUS", "h:1",
                "GDASYNC_SECRET_FILE", f.toString());
        assertTrue(error(env).contains("can be read by other users"), error(env));
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        assertArrayEquals(java.util.HexFormat.of().parseHex(SECRET), JobEnvironment.parse(env).secret());
        env.put("GDASYNC_SECRET_FILE", dir.resolve("missing").toString());
        assertTrue(error(env).startsWith("cannot read the job secret GDASYNC_SECRET_FILE="), error(env));
    }

    @Test
    void oneRankNeedsNoRendezvous() {
        JobEnvironment e = JobEnvironment.parse(env("GDASYNC_RANK", "0", "GDASYNC_SIZE", "1"));
        assertNull(e.rendezvous());
        assertNull(e.secret());
        assertTrue(JobIds.isValid(e.jobId()));
        try (EnvBootstrap b = EnvBootstrap.connect(e)) {
            assertEquals(1, b.allGather(new byte[]{7}).size());
            b.barrier();
        }
    }

    @Test
    void explicitValues() {
        JobEnvironment e = JobEnvironment.of(1, 2, "127.0.0.1:5000", new byte[16], "t1", Duration.ofSeconds(1));
        assertEquals("explicit values", e.source());
        assertEquals(5000, e.port());
        assertThrows(BootstrapException.class, () -> JobEnvironment.of(1, 2, null, new byte[16], "t1", Duration.ofSeconds(1)));
        assertThrows(BootstrapException.class, () -> JobEnvironment.of(1, 2, "h:1", new byte[8], "t1", Duration.ofSeconds(1)));
        assertThrows(BootstrapException.class, () -> JobEnvironment.of(2, 2, "h:1", new byte[16], "t1", Duration.ofSeconds(1)));
    }
}

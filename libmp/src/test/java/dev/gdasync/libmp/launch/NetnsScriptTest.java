package dev.gdasync.libmp.launch;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code scripts/netns}: up is idempotent, status shows the layout, cut and restore take a host's link
 * down and up, wrong command lines exit with 2. Never runs {@code down}: other tests (and other checkouts
 * on this machine) may be using the namespaces. Needs root and {@code ip netns}; skipped elsewhere.
 */
@Timeout(120)
class NetnsScriptTest {

    record Result(int status, String output) {
    }

    static Result script(String... args) throws IOException, InterruptedException {
        Path script = NetNamespaces.script().orElseThrow();
        List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "scripts/netns " + String.join(" ", args) + " ended");
        return new Result(p.exitValue(), out);
    }

    @BeforeEach
    void namespaces() {
        NetnsLaunchTest.assumeNetns();
    }

    @Test
    void upIsIdempotentAndStatusShowsTheLayout() throws Exception {
        Result up = script("up", "2");
        assertEquals(0, up.status(), up.output());
        assertTrue(up.output().contains("gdasync-h1: 10.77.0.11 (eth0 <-> gdasync-v1 on gdasync-br0)"), up.output());
        Result status = script("status");
        assertEquals(0, status.status(), status.output());
        assertTrue(status.output().contains("bridge gdasync-br0: 10.77.0.1/24, UP"), status.output());
        assertTrue(status.output().contains("gdasync-h0: 10.77.0.10/24, eth0 UP, gdasync-v0 UP"), status.output());
        assertTrue(status.output().contains("gdasync-h1: 10.77.0.11/24, eth0 UP, gdasync-v1 UP"), status.output());
    }

    @Test
    void cutAndRestoreTakeAHostsLinkDownAndUp() throws Exception {
        assertEquals(0, script("up", "2").status());
        try {
            Result cut = script("cut", "1");
            assertEquals(0, cut.status(), cut.output());
            String down = script("status").output();
            assertTrue(down.contains("gdasync-h1: 10.77.0.11/24, eth0 DOWN, gdasync-v1 DOWN")
                    || down.contains("gdasync-h1: 10.77.0.11/24, eth0 LOWERLAYERDOWN, gdasync-v1 DOWN"), down);
            assertTrue(down.contains("gdasync-h0: 10.77.0.10/24, eth0 UP, gdasync-v0 UP"), down);
        } finally {
            Result restore = script("restore", "1");
            assertEquals(0, restore.status(), restore.output());
        }
        assertTrue(script("status").output().contains("gdasync-h1: 10.77.0.11/24, eth0 UP, gdasync-v1 UP"));
    }

    @Test
    void notRootIsAClearError(@TempDir Path dir) throws Exception {
        Path setpriv = NetNamespaces.onPath("setpriv").orElse(null);
        Assumptions.assumeTrue(setpriv != null, "no setpriv to drop root with");
        Path copy = dir.resolve("netns");
        Files.copy(NetNamespaces.script().orElseThrow(), copy);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
        Process p = new ProcessBuilder(setpriv.toString(), "--reuid", "65534", "--regid", "65534", "--clear-groups",
                "bash", copy.toString(), "up", "2").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        Assumptions.assumeFalse(out.contains("Permission denied"), "uid 65534 cannot read " + copy + ": " + out);
        assertEquals(1, p.exitValue(), out);
        assertTrue(out.contains("gdasync netns: network namespaces need root (running as uid 65534)"), out);
    }

    @Test
    void wrongCommandLines() throws Exception {
        Result unknown = script("sideways");
        assertEquals(2, unknown.status(), unknown.output());
        assertTrue(unknown.output().startsWith("gdasync netns: unknown command 'sideways'"), unknown.output());
        Result zero = script("up", "0");
        assertEquals(2, zero.status(), zero.output());
        assertTrue(zero.output().contains("up takes a number of hosts from 1 to 64, not '0'"), zero.output());
        Result host = script("cut", "x");
        assertEquals(2, host.status(), host.output());
        assertTrue(host.output().contains("a host number from 0 to 63, not 'x'"), host.output());
        Result missing = script("cut", "63");
        assertEquals(1, missing.status(), missing.output());
        assertTrue(missing.output().contains("host 63 has no link gdasync-v63"), missing.output());
    }
}

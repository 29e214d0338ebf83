package dev.gdasync.libmp.launch;

import dev.gdasync.libmp.bootstrap.EnvNames;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Several "hosts" on one machine for {@code mprun --netns K}: the network namespaces that
 * {@code scripts/netns} makes, and how a rank is placed in one (docs/netns.md).
 *
 * <p>Host k is the namespace {@code gdasync-hk}; its {@code eth0} has 10.77.0.(10+k)/24 and is joined by a
 * veth pair to the bridge {@code gdasync-br0} (10.77.0.1/24) in the root namespace. Rank r runs on host
 * {@code r % K}, so rank 0, which holds the bootstrap's rendezvous, is always on host 0.
 *
 * <p>The namespaces are made by one implementation only, the script: {@link #ensureUp} runs
 * {@code scripts/netns up K}, which keeps what exists and repairs what is missing. The script is found
 * through {@code GDASYNC_NETNS_SCRIPT} (set by {@code scripts/mprun}), else the system property
 * {@code gdasync.netns.script}, else as {@code scripts/netns} in the working folder or one of its parents,
 * or beside the launcher's class path entry.
 */
final class NetNamespaces {
    /** The name of host k's namespace is this and k. */
    static final String PREFIX = "gdasync-h";
    /** The bridge's address in the root namespace. */
    static final String BRIDGE_ADDRESS = "10.77.0.1";
    /** The most hosts the address plan and the script allow. */
    static final int MAX_HOSTS = 64;
    /** The variable that names the script. */
    static final String SCRIPT_VARIABLE = EnvNames.NETNS_SCRIPT;
    private static final long UP_TIMEOUT_SECONDS = 60;

    private NetNamespaces() {
    }

    /** @return the namespace of host k */
    static String name(int host) {
        return PREFIX + host;
    }

    /** @return the address of host k's eth0 */
    static String address(int host) {
        return "10.77.0." + (10 + host);
    }

    /** @return the host that rank {@code rank} runs on when ranks are spread over {@code hosts} hosts */
    static int hostOf(int rank, int hosts) {
        return rank % hosts;
    }

    /**
     * Makes sure hosts 0 .. {@code hosts - 1} exist and are connected, by running {@code scripts/netns up}.
     *
     * @return the command prefix that runs a program in a namespace, without the namespace's name
     *         ({@code [/usr/sbin/ip, netns, exec]})
     * @throws IllegalStateException naming precisely what is missing: root, the ip command, the script, or
     *                               what the script said when it failed
     */
    static List<String> ensureUp(int hosts) {
        Path ip = onPath("ip").orElseThrow(() -> new IllegalStateException(
                "the ip command (iproute2) is not on PATH: install Debian's iproute2 package"));
        long uid = effectiveUid();
        if (uid != 0) {
            throw new IllegalStateException("network namespaces need root, and the launcher runs as uid " + uid
                    + ": run it as root (e.g. sudo scripts/mprun --netns " + hosts + " ...)");
        }
        Path script = script().orElseThrow(() -> new IllegalStateException(
                "cannot find scripts/netns (which makes the namespaces): set " + SCRIPT_VARIABLE
                        + " to its path, or run from the project's folder"));
        List<String> command = List.of("bash", script.toString(), "up", Integer.toString(hosts));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] output;
            try (InputStream in = p.getInputStream()) {
                output = in.readAllBytes();
            }
            if (!p.waitFor(UP_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("'" + String.join(" ", command) + "' did not finish in "
                        + UP_TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("'" + String.join(" ", command) + "' failed (exit status "
                        + p.exitValue() + "): " + new String(output, StandardCharsets.UTF_8).strip());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run '" + String.join(" ", command) + "': " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while bringing the namespaces up", e);
        }
        return List.of(ip.toString(), "netns", "exec");
    }

    /** @return the effective uid of this process (from /proc/self/status), or -1 when unknown */
    static long effectiveUid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return Long.parseLong(line.substring(4).strip().split("\\s+")[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // below
        }
        return -1;
    }

    /** @return the script that makes the namespaces, if it can be found */
    static Optional<Path> script() {
        String named = System.getenv(SCRIPT_VARIABLE);
        if (named == null || named.isEmpty()) {
            named = System.getProperty("gdasync.netns.script");
        }
        if (named != null && !named.isEmpty()) {
            Path p = Path.of(named);
            return Files.isRegularFile(p) ? Optional.of(p.toAbsolutePath()) : Optional.empty();
        }
        List<Path> starts = new ArrayList<>();
        starts.add(Path.of(System.getProperty("user.dir")).toAbsolutePath());
        codeLocation().ifPresent(starts::add);
        for (Path start : starts) {
            for (Path dir = start; dir != null; dir = dir.getParent()) {
                Path candidate = dir.resolve("scripts").resolve("netns");
                if (Files.isRegularFile(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<Path> codeLocation() {
        try {
            CodeSource source = NetNamespaces.class.getProtectionDomain().getCodeSource();
            return source == null ? Optional.empty() : Optional.of(Path.of(source.getLocation().toURI()).toAbsolutePath());
        } catch (URISyntaxException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** @return the first executable called {@code program} on PATH (and in /usr/sbin and /sbin, where ip lives) */
    static Optional<Path> onPath(String program) {
        List<String> dirs = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            dirs.addAll(List.of(path.split(File.pathSeparator)));
        }
        dirs.addAll(List.of("/usr/sbin", "/sbin"));
        for (String dir : dirs) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isExecutable(p) && !Files.isDirectory(p)) {
                return Optional.of(p.toAbsolutePath());
            }
        }
        return Optional.empty();
    }
}

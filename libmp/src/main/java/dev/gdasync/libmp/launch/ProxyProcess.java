package dev.gdasync.libmp.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** One host's collective proxy as the launcher runs it: its process, its output pumps, its locator file. */
final class ProxyProcess {
    private final Process process;
    private final Path locator;
    private final Thread stdoutPump;
    private final Thread stderrPump;

    private ProxyProcess(Process process, Path locator, String label, PrintStream out, PrintStream err) {
        this.process = process;
        this.locator = locator;
        this.stdoutPump = Thread.ofPlatform().name("mprun-proxy-out").start(new LinePump(process.getInputStream(), out, label));
        this.stderrPump = Thread.ofPlatform().name("mprun-proxy-err").start(new LinePump(process.getErrorStream(), err, label));
    }

    /**
     * @param command the proxy's command line
     * @param env     variables to set in its environment
     * @param unset   variables to remove from it
     * @param locator the file the proxy publishes its queue's path in
     * @param label   its output lines' prefix ("proxy", or "proxy hK" with several hosts)
     */
    static ProxyProcess start(List<String> command, Map<String, String> env, List<String> unset, Path locator,
                              String label, PrintStream out, PrintStream err) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        unset.forEach(pb.environment()::remove);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        return new ProxyProcess(p, locator, label, out, err);
    }

    /** Stops the proxy (SIGTERM, then SIGKILL after the patience), copies its last lines, removes its locator. */
    void stop(Duration patience, Duration drain, PrintStream err) throws InterruptedException {
        ProcessHandle h = process.toHandle();
        if (h.isAlive()) {
            h.destroy();
            if (!process.waitFor(patience.toMillis(), TimeUnit.MILLISECONDS)) {
                h.destroyForcibly();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    err.println("mprun: the collective proxy (pid " + h.pid() + ") survived SIGKILL");
                }
            }
        }
        stdoutPump.join(drain.toMillis());
        stderrPump.join(drain.toMillis());
        try {
            Files.deleteIfExists(locator);
        } catch (IOException e) {
            err.println("mprun: could not remove " + locator + ": " + e.getMessage());
        }
    }
}

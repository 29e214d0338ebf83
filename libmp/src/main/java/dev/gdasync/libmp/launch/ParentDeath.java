package dev.gdasync.libmp.launch;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Makes the ranks die with the launcher even when it cannot stop them itself (SIGKILL): where
 * util-linux's {@code setpriv} supports {@code --pdeathsig}, each rank is started through
 * {@code setpriv --pdeathsig KILL}, which asks Linux to send the rank SIGKILL when the thread that
 * started it ends. The launcher starts its ranks from the thread that supervises them until the end,
 * so this fires only when the launcher is gone. Without {@code setpriv} ranks are started directly.
 */
final class ParentDeath {
    private ParentDeath() {
    }

    /** @return the command prefix that arms the signal, or an empty list where it is not available */
    static List<String> prefix() {
        String path = System.getenv("PATH");
        if (path == null) {
            return List.of();
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path setpriv = Path.of(dir.isEmpty() ? "." : dir, "setpriv");
            if (Files.isExecutable(setpriv) && works(setpriv)) {
                return List.of(setpriv.toString(), "--pdeathsig", "KILL");
            }
        }
        return List.of();
    }

    private static boolean works(Path setpriv) {
        try {
            Process p = new ProcessBuilder(setpriv.toString(), "--pdeathsig", "KILL", "true")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}

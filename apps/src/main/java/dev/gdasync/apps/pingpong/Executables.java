package dev.gdasync.apps.pingpong;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Finds programs on PATH, as a shell would. */
public final class Executables {
    private Executables() {
    }

    /**
     * @param name a program's name
     * @return its path in the first PATH folder that holds it as an executable file, or empty
     */
    public static Optional<Path> onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}

package dev.gdasync.ki;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Finds and runs the native tools the tests of the CUDA side use: g++, nvcc. */
final class NativeTools {
    private NativeTools() {
    }

    /** @return the module's folder (surefire runs tests there and sets {@code basedir}) */
    static Path moduleDir() {
        return Path.of(System.getProperty("basedir", "")).toAbsolutePath();
    }

    /** @return the CUDA sources' folder */
    static Path cudaDir() {
        return moduleDir().resolve("src/main/cuda");
    }

    /**
     * @param name an executable's name
     * @return it, from the first PATH entry that has it
     */
    static Optional<Path> onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty()) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        return Optional.empty();
    }

    /** @return nvcc where {@code build-kernels.sh} looks for it: $NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda/bin */
    static Optional<Path> nvcc() {
        String nvcc = System.getenv("NVCC");
        if (nvcc != null && !nvcc.isEmpty() && Files.isExecutable(Path.of(nvcc))) {
            return Optional.of(Path.of(nvcc));
        }
        String home = System.getenv("CUDA_HOME");
        if (home != null && !home.isEmpty() && Files.isExecutable(Path.of(home, "bin", "nvcc"))) {
            return Optional.of(Path.of(home, "bin", "nvcc"));
        }
        Optional<Path> onPath = onPath("nvcc");
        if (onPath.isPresent()) {
            return onPath;
        }
        Path usual = Path.of("/usr/local/cuda/bin/nvcc");
        return Files.isExecutable(usual) ? Optional.of(usual) : Optional.empty();
    }

    /**
     * Runs a command and waits for it.
     *
     * @param command the command line
     * @return its exit code and its output (stdout and stderr together)
     */
    static Result run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("timed out: " + command);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /**
     * A finished command.
     *
     * @param exitCode its exit code
     * @param output   what it printed
     */
    record Result(int exitCode, String output) {
    }
}

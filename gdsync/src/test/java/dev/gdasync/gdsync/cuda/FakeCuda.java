package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.testutil.ChildProcess;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Test support: builds the fake driver library ({@code fake_libcuda.c}, a test resource) with gcc and runs
 * child JVMs against it, so JCuda code paths run on machines without a GPU. Shared with ki-kernels'
 * tests through gdsync's test jar.
 */
public final class FakeCuda {
    private static final String FOLDER = "dev/gdasync/gdsync/cuda/";
    /** The parts of the fake, compiled together; the header is shared by all. */
    private static final List<String> SOURCES = List.of("fake_libcuda.c", "fake_libcuda_stream.c", "fake_libcuda_memory.c");
    private static final String HEADER = "fake_libcuda.h";
    /** How long a child JVM may run before it is killed and the test fails. */
    public static final Duration CHILD_LIMIT = Duration.ofSeconds(120);

    private FakeCuda() {
    }

    /**
     * The output of a child JVM.
     *
     * @param exitCode its exit code
     * @param stdout   what it printed
     * @param stderr   what it printed on stderr
     */
    public record Child(int exitCode, String stdout, String stderr) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
        }
    }

    /** @return why the fake cannot be built here (no gcc), or empty */
    public static Optional<String> unavailableReason() {
        try {
            Process p = new ProcessBuilder("gcc", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor() == 0 ? Optional.empty() : Optional.of("gcc --version failed: the fake libcuda needs gcc");
        } catch (IOException e) {
            return Optional.of("gcc not found: the fake libcuda tests need gcc");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    /**
     * Compiles the fake driver into {@code dir/libcuda.so.1}.
     *
     * @param dir an empty folder
     * @return the folder, for LD_LIBRARY_PATH
     */
    public static Path build(Path dir) {
        try {
            if (!copyResource(HEADER, dir)) {
                throw new IllegalStateException(FOLDER + HEADER + " is not on the test class path");
            }
            List<String> command = new ArrayList<>(List.of("gcc", "-shared", "-fPIC", "-O1", "-pthread", "-I", dir.toString(),
                    "-o", dir.resolve("libcuda.so.1").toString()));
            for (String source : SOURCES) {
                if (copyResource(source, dir)) {
                    command.add(dir.resolve(source).toString());
                } else if (source.equals(SOURCES.getFirst())) {
                    throw new IllegalStateException(FOLDER + source + " is not on the test class path");
                }
            }
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("gcc could not build the fake libcuda:\n" + out);
            }
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Copies a part of the fake into the build folder; false if the test class path lacks it. */
    private static boolean copyResource(String name, Path dir) throws IOException {
        try (InputStream in = FakeCuda.class.getClassLoader().getResourceAsStream(FOLDER + name)) {
            if (in == null) {
                return false;
            }
            Files.write(dir.resolve(name), in.readAllBytes());
            return true;
        }
    }

    /**
     * Runs a main class of the test class path in a child JVM.
     *
     * @param libraryPath the LD_LIBRARY_PATH of the child (the fake's folder), or null for none at all
     * @param tmp         the child's java.io.tmpdir (JCuda unpacks its native library there)
     * @param env         more environment variables (FAKE_CUDA_*)
     * @param main        the main class
     * @param args        its arguments
     * @return its output
     */
    public static Child run(Path libraryPath, Path tmp, Map<String, String> env, Class<?> main, String... args) {
        Map<String, String> variables = new HashMap<>(env);
        if (libraryPath != null) {
            variables.put("LD_LIBRARY_PATH", libraryPath.toString());
        }
        return run(ChildProcess.builder(main.getSimpleName(), javaCommand(tmp, List.of(), main, args))
                .removeEnvironment(k -> k.equals("LD_LIBRARY_PATH") || k.startsWith("FAKE_CUDA_"))
                .environment(variables));
    }

    /**
     * Runs a main class of the test class path in a child JVM with this JVM's environment (the real driver, if any).
     *
     * @param tmp        the child's java.io.tmpdir (JCuda unpacks its native library there)
     * @param jvmOptions more JVM options
     * @param main       the main class
     * @param args       its arguments
     * @return its exit status and output
     */
    public static Child runChild(Path tmp, List<String> jvmOptions, Class<?> main, String... args) {
        return run(ChildProcess.builder(main.getSimpleName(), javaCommand(tmp, jvmOptions, main, args)));
    }

    /**
     * A child JVM's command line: this JVM's java and class path with its usual GC and JIT (some children measure
     * what the JIT removes), {@code tmp} as its {@code java.io.tmpdir}.
     *
     * @param tmp        the child's java.io.tmpdir (JCuda unpacks its native library there)
     * @param jvmOptions more JVM options
     * @param main       the main class
     * @param args       its arguments
     * @return the command line
     */
    public static List<String> javaCommand(Path tmp, List<String> jvmOptions, Class<?> main, String... args) {
        List<String> options = new ArrayList<>();
        options.add("-Djava.io.tmpdir=" + tmp);
        options.addAll(jvmOptions);
        return ChildProcess.fullJavaCommand(options, main, List.of(args));
    }

    /**
     * Runs a child to its end.
     *
     * @param child the child
     * @return its exit status and output
     * @throws org.opentest4j.AssertionFailedError if it runs longer than {@link #CHILD_LIMIT} (it is killed)
     */
    public static Child run(ChildProcess.Builder child) {
        ChildProcess.Finished f = child.run(CHILD_LIMIT);
        return new Child(f.status(), f.out(), f.err());
    }
}

package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.cuda.FakeCuda;
import dev.gdasync.gdsync.testutil.ChildProcess;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Test support: builds the stand-in GDRCopy library ({@code fake_libgdrapi.c}, a test resource) and the
 * preloaded stand-in for the one CUDA copy call ({@code fake_cuda_copy.c}) with gcc, and runs child JVMs
 * against them. The library is found by name ({@code libgdrapi.so.2}) through the child's
 * {@code LD_LIBRARY_PATH}, exactly as the binding looks for the real one.
 */
public final class FakeGdr {
    private static final String FOLDER = "dev/gdasync/gdsync/gdrcopy/";
    /** The stand-in library's source. */
    static final String LIBRARY_SOURCE = "fake_libgdrapi.c";
    /** The preloaded copy call's source. */
    static final String COPY_SOURCE = "fake_cuda_copy.c";
    /** The file name of the preloaded copy call. */
    static final String COPY_LIBRARY = "libgdasync_fake_cuda_copy.so";

    private FakeGdr() {
    }

    /** @return why the fakes cannot be built here (no gcc), or empty */
    public static Optional<String> unavailableReason() {
        try {
            Process p = new ProcessBuilder("gcc", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor() == 0 ? Optional.empty() : Optional.of("gcc --version failed: the fake libgdrapi needs gcc");
        } catch (IOException e) {
            return Optional.of("gcc not found: the fake libgdrapi tests need gcc");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    /**
     * Compiles the stand-in library.
     *
     * @param dir      a folder (created if missing)
     * @param fileName the library's file name: {@code libgdrapi.so.2}, or {@code libgdrapi.so}
     * @param v1       whether to build the GDRCopy 2.0 to 2.3 ABI (no {@code gdr_get_info_v2})
     * @return the folder, for LD_LIBRARY_PATH
     */
    public static Path build(Path dir, String fileName, boolean v1) {
        List<String> command = new ArrayList<>(List.of("gcc", "-shared", "-fPIC", "-O1", "-Wall"));
        if (v1) {
            command.add("-DFAKE_GDR_V1");
        }
        command.addAll(List.of("-Wl,-soname," + fileName, "-o", dir.resolve(fileName).toString(),
                copyResource(LIBRARY_SOURCE, dir).toString()));
        return compile(dir, command);
    }

    /**
     * Compiles a library named {@code libgdrapi.so.2} that exports no GDRCopy function at all.
     *
     * @param dir a folder (created if missing)
     * @return the folder, for LD_LIBRARY_PATH
     */
    public static Path buildImpostor(Path dir) {
        try {
            Files.createDirectories(dir);
            Path source = dir.resolve("impostor.c");
            Files.writeString(source, "int gdasync_not_libgdrapi = 1;\n");
            return compile(dir, List.of("gcc", "-shared", "-fPIC", "-o", dir.resolve(GdrLibrary.SONAME).toString(),
                    source.toString()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Compiles the preloaded stand-in for {@code cuMemcpyDtoHAsync_v2}.
     *
     * @param dir a folder (created if missing)
     * @return the library's path, for LD_PRELOAD
     */
    public static Path buildCopyPreload(Path dir) {
        compile(dir, List.of("gcc", "-shared", "-fPIC", "-O1", "-Wall", "-o", dir.resolve(COPY_LIBRARY).toString(),
                copyResource(COPY_SOURCE, dir).toString()));
        return dir.resolve(COPY_LIBRARY);
    }

    private static Path compile(Path dir, List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("gcc failed: " + String.join(" ", command) + "\n" + out);
            }
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Path copyResource(String name, Path dir) {
        try (InputStream in = FakeGdr.class.getClassLoader().getResourceAsStream(FOLDER + name)) {
            if (in == null) {
                throw new IllegalStateException(FOLDER + name + " is not on the test class path");
            }
            Files.createDirectories(dir);
            Path target = dir.resolve(name);
            Files.write(target, in.readAllBytes());
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Runs a main class of the test class path in a child JVM. The child gets none of this JVM's
     * LD_LIBRARY_PATH, LD_PRELOAD, FAKE_GDR_* or FAKE_CUDA_* variables, only the ones given.
     *
     * @param libraryPath the folders of the child's LD_LIBRARY_PATH; empty for none
     * @param preload     a library for LD_PRELOAD, or null
     * @param tmp         the child's java.io.tmpdir (JCuda unpacks its native library there)
     * @param env         more environment variables (FAKE_GDR_*, FAKE_CUDA_*)
     * @param jvmOptions  options before the main class (system properties)
     * @param main        the main class
     * @param args        its arguments
     * @return its exit code and output
     */
    public static FakeCuda.Child run(List<Path> libraryPath, Path preload, Path tmp, Map<String, String> env,
                                     List<String> jvmOptions, Class<?> main, String... args) {
        Map<String, String> variables = new HashMap<>(env);
        if (!libraryPath.isEmpty()) {
            variables.put("LD_LIBRARY_PATH", libraryPath.stream().map(Path::toString).collect(Collectors.joining(":")));
        }
        if (preload != null) {
            variables.put("LD_PRELOAD", preload.toString());
        }
        return FakeCuda.run(ChildProcess.builder(main.getSimpleName(), FakeCuda.javaCommand(tmp, jvmOptions, main, args))
                .removeEnvironment(k -> k.equals("LD_LIBRARY_PATH") || k.equals("LD_PRELOAD") || k.startsWith("FAKE_GDR_")
                        || k.startsWith("FAKE_CUDA_") || k.startsWith("GDRCOPY_"))
                .environment(variables));
    }
}

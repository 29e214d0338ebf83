package dev.gdasync.gdsync.cuda;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM of a test: this JVM's {@code java}, native access enabled, this JVM's class path, a main class.
 * The caller shapes its environment (the driver libraries it finds) before running it.
 */
public final class ChildJvm {
    /** How long a child may run before it is killed and the test fails. */
    public static final long LIMIT_SECONDS = 120;

    private ChildJvm() {
    }

    /**
     * @param tmp        the child's {@code java.io.tmpdir} (JCuda unpacks its native library there)
     * @param jvmOptions more JVM options
     * @param main       the main class
     * @param args       its arguments
     * @return a process builder with this JVM's environment
     */
    public static ProcessBuilder command(Path tmp, List<String> jvmOptions, Class<?> main, String... args) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-Djava.io.tmpdir=" + tmp);
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(List.of(args));
        return new ProcessBuilder(command);
    }

    /**
     * Runs the child to its end, its output in files under {@code tmp}.
     *
     * @param pb  the child, from {@link #command}
     * @param tmp a folder for its output
     * @return its exit status and output
     * @throws IllegalStateException if it runs longer than {@link #LIMIT_SECONDS} (it is killed)
     */
    public static FakeCuda.Child run(ProcessBuilder pb, Path tmp) {
        try {
            Path out = Files.createTempFile(tmp, "child", ".out");
            Path err = Files.createTempFile(tmp, "child", ".err");
            pb.redirectOutput(out.toFile()).redirectError(err.toFile());
            Process p = pb.start();
            if (!p.waitFor(LIMIT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("the child JVM " + pb.command() + " did not end within " + LIMIT_SECONDS
                        + " s");
            }
            return new FakeCuda.Child(p.exitValue(), Files.readString(out), Files.readString(err));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

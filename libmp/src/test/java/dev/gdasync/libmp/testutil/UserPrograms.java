package dev.gdasync.libmp.testutil;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Programs as a user writes them: compiled at test time against this class path, into a folder or a jar. */
public final class UserPrograms {
    private UserPrograms() {
    }

    /**
     * Compiles sources with javac (in this JVM) against this JVM's class path.
     *
     * @param classes where the classes go (made if missing)
     * @param sources file name relative to a source root (for example {@code demo/Hello.java}) to its text
     * @return {@code classes}
     */
    public static Path compile(Path classes, Map<String, String> sources) throws IOException {
        Path src = Files.createDirectories(classes.resolveSibling(classes.getFileName() + "-src"));
        Files.createDirectories(classes);
        List<String> args = new ArrayList<>(List.of("--release", "25", "-proc:none", "-d", classes.toString(),
                "-cp", System.getProperty("java.class.path")));
        for (Map.Entry<String, String> e : sources.entrySet()) {
            Path file = src.resolve(e.getKey());
            Files.createDirectories(file.getParent());
            Files.writeString(file, e.getValue());
            args.add(file.toString());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int rc = javac.run(null, diagnostics, diagnostics, args.toArray(String[]::new));
        assertEquals(0, rc, "javac failed: " + diagnostics.toString(StandardCharsets.UTF_8));
        return classes;
    }

    /**
     * Packs a folder of classes into a jar.
     *
     * @return {@code jar}
     */
    public static Path jar(Path classes, Path jar) throws IOException {
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file);
             Stream<Path> all = Files.walk(classes)) {
            for (Path p : all.filter(Files::isRegularFile).toList()) {
                out.putNextEntry(new JarEntry(classes.relativize(p).toString().replace('\\', '/')));
                out.write(Files.readAllBytes(p));
                out.closeEntry();
            }
        }
        return jar;
    }
}

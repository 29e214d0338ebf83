package dev.gdasync.apps.pingpong;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Builds a C peer's program at first use (the ping-pong's peers, the collectives benchmark's Open MPI program): the
 * source ships in the apps jar ({@code dev/gdasync/apps/pingpong/cpeers/NAME.c}); the binary is
 * compiled into the cache folder ({@code $GDASYNC_CACHE}, else {@code $XDG_CACHE_HOME/gdasync}, else
 * {@code ~/.cache/gdasync}) under a name holding the hash of the source and the compiler command, so a changed
 * source or compiler builds anew and an unchanged one is reused. The binary is written beside its final name and
 * moved there in one step: two processes building at once both end with a whole binary.
 */
public final class CPeerBuild {
    /** The flags the C peers are built with (gcc and mpicc take the same). */
    public static final List<String> FLAGS = List.of("-O2", "-std=gnu11");
    /** How long one compilation may take. */
    private static final long COMPILE_SECONDS = 120;

    private CPeerBuild() {
    }

    /**
     * A built program, or why there is none.
     *
     * @param binary  the program, or null
     * @param problem why there is none, or null
     */
    public record Built(Path binary, String problem) {
        /** @return the binary, if it was built */
        public Optional<Path> path() {
            return Optional.ofNullable(binary);
        }
    }

    /**
     * @param name     the source's name without {@code .c}, a resource beside this class under {@code cpeers/}
     * @param compiler the compiler command ({@code gcc}, {@code mpicc}), found on PATH
     * @param flags    the compiler flags before the source
     * @return the binary, or the reason it could not be built (the compiler is missing, or it failed)
     */
    public static Built build(String name, String compiler, List<String> flags) {
        return build(name, compiler, flags, cacheFolder().resolve("pingpong"));
    }

    /**
     * As {@link #build(String, String, List)}, into a given folder.
     *
     * @param name     the source's name without {@code .c}
     * @param compiler the compiler command, found on PATH
     * @param flags    the compiler flags before the source
     * @param dir      where the binaries are kept (made if missing)
     * @return the binary, or the reason it could not be built
     */
    public static Built build(String name, String compiler, List<String> flags, Path dir) {
        Optional<Path> cc = Executables.onPath(compiler);
        if (cc.isEmpty()) {
            return new Built(null, compiler + " is not on PATH");
        }
        byte[] source;
        try (InputStream in = CPeerBuild.class.getResourceAsStream("cpeers/" + name + ".c")) {
            if (in == null) {
                return new Built(null, "the source cpeers/" + name + ".c is missing from the apps jar");
            }
            source = in.readAllBytes();
        } catch (IOException e) {
            return new Built(null, "cannot read cpeers/" + name + ".c: " + e.getMessage());
        }
        List<String> command = new ArrayList<>();
        command.add(cc.get().toString());
        command.addAll(flags);
        Path binary = dir.resolve(name + "-" + hash(source, String.join(" ", command)));
        if (Files.isExecutable(binary)) {
            return new Built(binary, null);
        }
        try {
            Files.createDirectories(dir);
            Path src = Files.createTempFile(dir, name + "-", ".c");
            Path tmp = Files.createTempFile(dir, name + "-", ".tmp");
            try {
                Files.write(src, source);
                command.addAll(List.of(src.toString(), "-o", tmp.toString()));
                Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
                p.getOutputStream().close();
                String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(COMPILE_SECONDS, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    return new Built(null, compiler + " took more than " + COMPILE_SECONDS + " s on " + name + ".c");
                }
                if (p.exitValue() != 0) {
                    return new Built(null, String.join(" ", command) + " failed (exit " + p.exitValue() + "): " + output.strip());
                }
                Files.move(tmp, binary, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                return new Built(binary, null);
            } finally {
                Files.deleteIfExists(src);
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            return new Built(null, "cannot build " + name + " in " + dir + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Built(null, "interrupted while building " + name);
        }
    }

    /** @return where built programs are kept */
    public static Path cacheFolder() {
        String own = System.getenv("GDASYNC_CACHE");
        if (own != null && !own.isBlank()) {
            return Path.of(own);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg, "gdasync");
        }
        return Path.of(System.getProperty("user.home"), ".cache", "gdasync");
    }

    private static String hash(byte[] source, String command) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(source);
            d.update(command.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}

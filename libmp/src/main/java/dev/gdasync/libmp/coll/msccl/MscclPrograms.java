package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.bootstrap.EnvNames;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The loaded MSCCL-IR programs of a job and the rule that picks one for a call. Loading is all or nothing: the
 * first bad file fails the whole load with its message, and no program of the set is used.
 *
 * <p>Selection: the first program, in load order, whose collective, in-place flag and rank count equal the
 * call's, whose {@code nchunksperloop} divides the call's larger buffer (in elements, at least one element per
 * chunk), and whose size range holds the call's size. The size is NCCL's: the call's {@code count} times the
 * element size (allreduce: the vector; allgather: one rank's block; alltoall: one peer's block; reduce-scatter:
 * one rank's result). The range is half-open, {@code minBytes <= size < maxBytes}, with {@code maxBytes} 0 or
 * absent meaning no upper bound, so adjacent programs ({@code [0, 1M)}, {@code [1M, 0)}) never both match.
 */
public final class MscclPrograms {
    /** The environment variable listing program files or directories (separated by the path separator). */
    public static final String ENV = EnvNames.MSCCL_XML;
    /** The system property with the same meaning; it wins over {@link #ENV}. */
    public static final String PROPERTY = "gdasync.msccl.xml";

    private final List<MscclProgram> programs;

    private MscclPrograms(List<MscclProgram> programs) {
        this.programs = List.copyOf(programs);
    }

    /** @return an empty set: every call runs the built-in algorithms */
    public static MscclPrograms none() {
        return new MscclPrograms(List.of());
    }

    /**
     * @param programs programs already parsed
     * @return them as a set, in this order
     */
    public static MscclPrograms of(List<MscclProgram> programs) {
        Objects.requireNonNull(programs, "programs must not be null");
        return new MscclPrograms(programs);
    }

    /**
     * Loads files; a directory contributes its {@code *.xml} files in name order.
     *
     * @param paths  files or directories
     * @param limits what programs may use
     * @return the programs, in order
     * @throws MscclFormatException if any file is bad (nothing is loaded)
     * @throws UncheckedIOException if a path cannot be read
     */
    public static MscclPrograms load(List<Path> paths, MscclLimits limits) {
        Objects.requireNonNull(paths, "paths must not be null");
        MscclParser parser = new MscclParser(limits);
        List<MscclProgram> out = new ArrayList<>();
        for (Path p : paths) {
            Objects.requireNonNull(p, "paths must not contain null");
            for (Path f : files(p)) {
                out.add(parser.parse(f));
            }
        }
        return new MscclPrograms(out);
    }

    /**
     * Loads what {@link #PROPERTY} or else {@link #ENV} lists; none if neither is set or both are empty.
     *
     * @return the programs
     * @throws MscclFormatException if any file is bad
     */
    public static MscclPrograms fromEnvironment() {
        String v = System.getProperty(PROPERTY);
        if (v == null || v.isBlank()) {
            v = System.getenv(ENV);
        }
        if (v == null || v.isBlank()) {
            return none();
        }
        List<Path> paths = new ArrayList<>();
        for (String s : v.split(File.pathSeparator)) {
            if (!s.isBlank()) {
                paths.add(Path.of(s.strip()));
            }
        }
        return load(paths, MscclLimits.defaults());
    }

    /** @return the programs, in load order */
    public List<MscclProgram> programs() {
        return programs;
    }

    /**
     * @param collective the call's collective
     * @param inPlace    whether its buffers have the in-place layout
     * @param ranks      the communicator's size
     * @param callBytes  its count times the element size
     * @param bigElems   the elements of its larger buffer
     * @return the program to run, or empty for the built-in algorithm
     */
    public Optional<MscclProgram> select(Collective collective, boolean inPlace, int ranks, long callBytes,
                                         long bigElems) {
        for (MscclProgram p : programs) {
            if (p.collective() == collective && p.inPlace() == inPlace && p.ngpus() == ranks
                    && bigElems >= p.nchunksperloop() && bigElems % p.nchunksperloop() == 0
                    && callBytes >= p.minBytes() && callBytes < p.maxBytes()) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    private static List<Path> files(Path p) {
        if (!Files.isDirectory(p)) {
            if (!Files.isRegularFile(p)) {
                throw new UncheckedIOException(new IOException("MSCCL-IR path " + p + " is not a file or directory"));
            }
            return List.of(p);
        }
        try (Stream<Path> s = Files.list(p)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".xml")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list MSCCL-IR directory " + p + ": " + e.getMessage(), e);
        }
    }
}

package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.OutputFile;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * What the gdsync ping-pong runs.
 *
 * @param rings       ring modes: cpu, stream
 * @param sizes       message sizes in bytes
 * @param iters       round trips per timed run for sizes up to 64 KiB (fewer above, see {@link #itersFor})
 * @param repetitions timed runs per size; the median is reported
 * @param csv         where to write the CSV, or null
 * @param jobId       the shared-memory job both processes join
 * @param pin         whether to pin the two stream threads of ring=stream to distinct CPUs
 */
record PingPongPlan(List<String> rings, List<Integer> sizes, int iters, int repetitions, Path csv, String jobId,
                    boolean pin) {

    static final int MAX_BYTES = 4 << 20;

    /** The command line, as picocli reads it. */
    @Command(name = "scripts/bench gdsync-pingpong", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
            sortOptions = false, usageHelpAutoWidth = false,
            description = {"Two processes ping-pong through the gdsync API over the shared-memory software NIC, the doorbell"
                    + " rung by the CPU (ring=cpu) or by a host stream (ring=stream); a single-thread memcpy of the same sizes"
                    + " is the bandwidth reference."},
            optionListHeading = "%nOptions:%n")
    static final class Options {
        @Option(names = "--sizes", paramLabel = "S[,S...]", converter = Sizes.class,
                description = "message sizes in bytes, 1..4194304 (default 8,64,512,4096,32768,262144,1048576,4194304)")
        List<Integer> sizes = List.of(8, 64, 512, 4096, 32768, 262144, 1048576, 4194304);

        @Option(names = "--iters", paramLabel = "N", converter = Positive.class,
                description = "round trips per timed run for sizes up to 64 KiB; larger sizes use fewer (default 10000)")
        int iters = 10_000;

        @Option(names = "--ring", paramLabel = "R[,R...]", converter = Rings.class,
                description = "doorbell ringers to compare: cpu, stream (default both)")
        List<String> rings = List.of("cpu", "stream");

        @Option(names = "--reps", paramLabel = "R", converter = Positive.class,
                description = "timed runs per size, the median is reported (default 5)")
        int reps = 5;

        @Option(names = "--csv", paramLabel = "FILE", converter = OutputFile.class,
                description = "write ring,bytes,iters,oneway_us,mbps to FILE (its folder must exist)")
        Path csv;

        @Option(names = "--pin", paramLabel = "yes|no", converter = YesNo.class,
                description = "pin the two stream threads of ring=stream to distinct CPUs (default yes)")
        String pin = "yes";

        /** The shared-memory job both processes join: set by the initiator for its responder. */
        @Option(names = "--job", hidden = true)
        String job = "bench-" + HexFormat.of().toHexDigits(new SecureRandom().nextInt());

        /** This process is the responder the initiator started. */
        @Option(names = "--responder", hidden = true)
        boolean responder;

        PingPongPlan plan() {
            return new PingPongPlan(rings, sizes, iters, reps, csv, job, pin.equals("yes"));
        }
    }

    /**
     * Reads a command line without printing (the responder's, and tests).
     *
     * @param args command-line arguments
     * @return the plan
     * @throws IllegalArgumentException with a precise message on bad arguments
     */
    static PingPongPlan parse(String[] args) {
        Options o = new Options();
        if (!CommandLines.parseOrThrow(CommandLines.of(o), args)) {
            throw new IllegalArgumentException("help or version asked for");
        }
        return o.plan();
    }

    /** A whole number above 0. */
    static final class Positive implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String v) {
            try {
                int n = Integer.parseInt(v.strip());
                if (n > 0) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw new TypeConversionException("'" + v + "' is not a positive whole number");
        }
    }

    /** --sizes. */
    static final class Sizes implements ITypeConverter<List<Integer>> {
        @Override
        public List<Integer> convert(String v) {
            List<Integer> out = new ArrayList<>();
            for (String s : v.split(",", -1)) {
                int n = new Positive().convert(s.strip());
                if (n > MAX_BYTES) {
                    throw new TypeConversionException(n + " exceeds the maximum of " + MAX_BYTES + " bytes");
                }
                out.add(n);
            }
            return List.copyOf(out);
        }
    }

    /** --ring. */
    static final class Rings implements ITypeConverter<List<String>> {
        @Override
        public List<String> convert(String v) {
            List<String> out = new ArrayList<>();
            for (String s : v.split(",", -1)) {
                String r = s.strip();
                if (!r.equals("cpu") && !r.equals("stream")) {
                    throw new TypeConversionException("unknown ringer '" + r + "' (cpu or stream)");
                }
                out.add(r);
            }
            return List.copyOf(out);
        }
    }

    /** yes or no (kept as text: picocli gives boolean options values of its own). */
    static final class YesNo implements ITypeConverter<String> {
        @Override
        public String convert(String v) {
            if (!v.equals("yes") && !v.equals("no")) {
                throw new TypeConversionException("'" + v + "' is not yes or no");
            }
            return v;
        }
    }

    /** @return the largest size */
    int maxBytes() {
        return sizes.stream().mapToInt(Integer::intValue).max().orElse(8);
    }

    /**
     * Round trips per timed run: {@link #iters} up to 64 KiB, then fewer so that a run moves at most
     * {@code iters * 64 KiB}, and never under 100.
     *
     * @param bytes the size
     * @return the iterations
     */
    int itersFor(int bytes) {
        if (bytes <= 65536) {
            return iters;
        }
        return (int) Math.max(Math.min(100, iters), (long) iters * 65536 / bytes);
    }

    /** @return the arguments that recreate this plan in the responder */
    List<String> toArgs() {
        return List.of("--sizes", String.join(",", sizes.stream().map(String::valueOf).toList()),
                "--iters", String.valueOf(iters), "--reps", String.valueOf(repetitions),
                "--ring", String.join(",", rings), "--job", jobId, "--pin", pin ? "yes" : "no");
    }
}

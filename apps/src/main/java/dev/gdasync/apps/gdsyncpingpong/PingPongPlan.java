package dev.gdasync.apps.gdsyncpingpong;

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

    static final String USAGE = """
            usage: scripts/bench gdsync-pingpong [--sizes 8,64,...] [--iters N] [--ring cpu,stream] [--reps R] [--csv FILE] [--pin yes|no]
              --sizes  message sizes in bytes, 1..4194304 (default 8,64,512,4096,32768,262144,1048576,4194304)
              --iters  round trips per timed run for sizes up to 64 KiB; larger sizes use fewer (default 10000)
              --ring   doorbell ringers to compare: cpu, stream (default both)
              --reps   timed runs per size, median reported (default 5)
              --csv    write ring,bytes,iters,oneway_us,mbps to FILE
              --pin    pin the two stream threads of ring=stream to distinct CPUs (default yes)""";

    static final int MAX_BYTES = 4 << 20;

    /**
     * @param args command-line arguments
     * @return the plan
     * @throws IllegalArgumentException with a precise message on bad arguments
     */
    static PingPongPlan parse(String[] args) {
        List<String> rings = List.of("cpu", "stream");
        List<Integer> sizes = List.of(8, 64, 512, 4096, 32768, 262144, 1048576, 4194304);
        int iters = 10_000;
        int reps = 5;
        Path csv = null;
        boolean pin = true;
        String job = "bench-" + HexFormat.of().toHexDigits(new SecureRandom().nextInt());
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) {
                System.out.println(USAGE);
                System.exit(0);
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--sizes" -> sizes = parseSizes(v);
                case "--iters" -> iters = positive(a, v);
                case "--reps" -> reps = positive(a, v);
                case "--ring" -> rings = parseRings(v);
                case "--csv" -> csv = Path.of(v);
                case "--job" -> job = v;
                case "--pin" -> pin = switch (v) {
                    case "yes" -> true;
                    case "no" -> false;
                    default -> throw new IllegalArgumentException("--pin takes yes or no, got '" + v + "'");
                };
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        return new PingPongPlan(rings, sizes, iters, reps, csv, job, pin);
    }

    private static int positive(String name, String v) {
        try {
            int n = Integer.parseInt(v);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new IllegalArgumentException(name + " must be a positive integer, got '" + v + "'");
    }

    private static List<Integer> parseSizes(String v) {
        List<Integer> out = new ArrayList<>();
        for (String s : v.split(",")) {
            int n = positive("--sizes", s.trim());
            if (n > MAX_BYTES) {
                throw new IllegalArgumentException("--sizes: " + n + " exceeds the maximum of " + MAX_BYTES + " bytes");
            }
            out.add(n);
        }
        return List.copyOf(out);
    }

    private static List<String> parseRings(String v) {
        List<String> out = new ArrayList<>();
        for (String s : v.split(",")) {
            String r = s.trim();
            if (!r.equals("cpu") && !r.equals("stream")) {
                throw new IllegalArgumentException("--ring: unknown ringer '" + r + "' (cpu or stream)");
            }
            out.add(r);
        }
        return List.copyOf(out);
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

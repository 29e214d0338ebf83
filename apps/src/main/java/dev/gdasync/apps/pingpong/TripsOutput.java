package dev.gdasync.apps.pingpong;

/**
 * The output of the C peers that time every round trip ({@code floor}, {@code ompi}): {@code total_ns N}, then
 * {@code trips ITERS}, then every round trip in nanoseconds, one a line.
 */
final class TripsOutput {
    private TripsOutput() {
    }

    /**
     * @param program the program's name, for errors
     * @param output  what it printed
     * @param iters   the round trips asked for
     * @return the run
     * @throws IllegalArgumentException naming what is wrong with the output
     */
    static CPeer.CPeerRun parse(String program, String output, int iters) {
        String[] lines = output.strip().split("\n");
        if (lines.length != iters + 2 || !lines[0].startsWith("total_ns ") || !lines[1].equals("trips " + iters)) {
            throw new IllegalArgumentException(program + " printed " + lines.length + " lines, not 'total_ns N', 'trips "
                    + iters + "' and " + iters + " round trips; it begins: " + first(output));
        }
        long total = number(program, lines[0].substring("total_ns ".length()));
        long[] trips = new long[iters];
        for (int i = 0; i < iters; i++) {
            trips[i] = number(program, lines[i + 2]);
        }
        return new CPeer.CPeerRun(total, trips, Double.NaN);
    }

    private static long number(String program, String s) {
        try {
            long n = Long.parseLong(s.strip());
            if (n < 0) {
                throw new NumberFormatException("negative");
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(program + " printed '" + s + "' where a count of nanoseconds belongs");
        }
    }

    private static String first(String output) {
        String s = output.strip();
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}

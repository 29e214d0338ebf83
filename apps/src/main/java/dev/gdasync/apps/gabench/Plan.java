package dev.gdasync.apps.gabench;

import java.util.ArrayList;
import java.util.List;

/**
 * What is measured, shared by the gdasync ranks and the MPJ Express ranks: the sizes, the reps, and the operations per
 * rep for a size ({@code iters}, fewer for large patches so that a rep moves at most {@code repBytes}, at least 2).
 *
 * @param sizes    patch sizes in bytes
 * @param runBytes the longest row run of a strided patch
 * @param iters    operations per rep for small patches
 * @param repBytes the most bytes one rep moves (above the minimum of 2 operations)
 * @param reps     timed reps per size and method, after one untimed warm-up rep
 * @param warmupMillis how long every method first runs untimed at the smallest size (so that the JIT has compiled
 *                 the paths before the first size is timed)
 */
record Plan(List<Integer> sizes, int runBytes, int iters, long repBytes, int reps, long warmupMillis) {
    static final int MIN_ITERS = 2;

    Plan {
        sizes = List.copyOf(sizes);
        if (sizes.isEmpty()) {
            throw new IllegalArgumentException("--sizes must name at least one size");
        }
        if (iters < 1 || reps < 1 || repBytes < 1 || warmupMillis < 0) {
            throw new IllegalArgumentException("--iters, --reps and --rep-bytes must be >= 1 and --warmup-ms >= 0");
        }
        Geometry.of(sizes, runBytes);
    }

    Geometry geometry() {
        return Geometry.of(sizes, runBytes);
    }

    /** @return operations per rep for a patch size */
    int iters(int bytes) {
        return (int) Math.max(Math.min(MIN_ITERS, iters), Math.min(iters, repBytes / bytes));
    }

    /** @return the plan as arguments for {@link #parse} */
    List<String> args() {
        List<String> out = new ArrayList<>();
        StringBuilder s = new StringBuilder();
        for (int b : sizes) {
            s.append(s.isEmpty() ? "" : ",").append(b);
        }
        out.add(s.toString());
        out.add(String.valueOf(runBytes));
        out.add(String.valueOf(iters));
        out.add(String.valueOf(repBytes));
        out.add(String.valueOf(reps));
        out.add(String.valueOf(warmupMillis));
        return out;
    }

    /** @return the plan from {@link #args} */
    static Plan parse(String[] a) {
        if (a.length != 6) {
            throw new IllegalArgumentException("expected sizes run-bytes iters rep-bytes reps warmup-ms, got " + a.length + " arguments");
        }
        List<Integer> sizes = new ArrayList<>();
        for (String s : a[0].split(",")) {
            sizes.add(Integer.parseInt(s.trim()));
        }
        return new Plan(sizes, Integer.parseInt(a[1]), Integer.parseInt(a[2]), Long.parseLong(a[3]), Integer.parseInt(a[4]),
                Long.parseLong(a[5]));
    }
}

package dev.gdasync.apps.comd;

/**
 * Time per {@link Phase}, in nanoseconds, added by whichever thread runs the phase (the rank's thread, its stream's
 * thread or its kernel's threads); read after the work was synchronized.
 */
final class Timers {
    private final long[] nanos = new long[Phase.values().length];

    synchronized void add(Phase phase, long ns) {
        nanos[phase.ordinal()] += ns;
    }

    synchronized long get(Phase phase) {
        return nanos[phase.ordinal()];
    }

    synchronized void reset() {
        java.util.Arrays.fill(nanos, 0);
    }
}

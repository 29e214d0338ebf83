package dev.gdasync.apps.gdsyncpingpong;

/**
 * One row of the results.
 *
 * @param ring         cpu, stream, or memcpy for the bandwidth reference
 * @param bytes        message size
 * @param iters        round trips (copies, for memcpy) per timed run
 * @param oneWayMicros median over the runs of half the round-trip time (one copy's time, for memcpy)
 */
record Result(String ring, int bytes, int iters, double oneWayMicros) {
    /** @return megabytes (10^6 bytes) per second delivered one way */
    double megabytesPerSecond() {
        return bytes / oneWayMicros;
    }

    String line() {
        return String.format("%-7s %9d B  %7d iters  %10.3f us  %10.1f MB/s", ring, bytes, iters, oneWayMicros,
                megabytesPerSecond());
    }
}

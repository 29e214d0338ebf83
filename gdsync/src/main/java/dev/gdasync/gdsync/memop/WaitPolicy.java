package dev.gdasync.gdsync.memop;

import dev.gdasync.gdsync.concurrent.BackoffPolicy;

import java.time.Duration;
import java.util.Objects;

/**
 * How a host executor waits on a word: its idle phases and the time after which the wait fails.
 *
 * @param backoff      spin, yield and park phases
 * @param timeoutNanos how long a single wait may take before it fails, in nanoseconds
 */
public record WaitPolicy(BackoffPolicy backoff, long timeoutNanos) {

    /** System property with the default wait timeout in milliseconds. */
    public static final String TIMEOUT_PROPERTY = "gdasync.wait.timeout.ms";

    /** The default timeout, 60 s, as LibMP's progress-error check. */
    public static final long DEFAULT_TIMEOUT_MS = 60_000;

    /**
     * @throws IllegalArgumentException if the timeout is not positive
     */
    public WaitPolicy {
        Objects.requireNonNull(backoff, "backoff");
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("wait timeout must be positive, got " + timeoutNanos + " ns");
        }
    }

    /**
     * A low-latency policy with the given timeout.
     *
     * @param timeout how long a wait may take
     * @return the policy
     */
    public static WaitPolicy lowLatency(Duration timeout) {
        return new WaitPolicy(BackoffPolicy.LOW_LATENCY, timeout.toNanos());
    }

    /**
     * The default policy: low-latency backoff and the timeout of {@value #TIMEOUT_PROPERTY}, or
     * {@value #DEFAULT_TIMEOUT_MS} ms when the property is unset.
     *
     * @return the policy
     * @throws IllegalArgumentException if the property is not a positive number
     */
    public static WaitPolicy defaults() {
        String value = System.getProperty(TIMEOUT_PROPERTY);
        long ms = DEFAULT_TIMEOUT_MS;
        if (value != null) {
            try {
                ms = Long.parseLong(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(TIMEOUT_PROPERTY + " must be a number of milliseconds, got '" + value + "'");
            }
        }
        return new WaitPolicy(BackoffPolicy.LOW_LATENCY, Duration.ofMillis(ms).toNanos());
    }

    /**
     * This policy with another timeout.
     *
     * @param timeout the new timeout
     * @return the policy
     */
    public WaitPolicy withTimeout(Duration timeout) {
        return new WaitPolicy(backoff, timeout.toNanos());
    }
}

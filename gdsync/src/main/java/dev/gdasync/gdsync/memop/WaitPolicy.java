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

    /** The longest timeout: {@link Long#MAX_VALUE} nanoseconds, about 292 years. */
    public static final Duration MAX_TIMEOUT = Duration.ofNanos(Long.MAX_VALUE);

    /**
     * @throws NullPointerException     if the backoff is null
     * @throws IllegalArgumentException if the timeout is not positive
     */
    public WaitPolicy {
        Objects.requireNonNull(backoff, "backoff must not be null");
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("wait timeout must be positive, got " + timeoutNanos + " ns");
        }
    }

    /**
     * A low-latency policy with the given timeout.
     *
     * @param timeout how long a wait may take, positive and at most {@link #MAX_TIMEOUT}
     * @return the policy
     * @throws NullPointerException     if the timeout is null
     * @throws IllegalArgumentException if the timeout is not positive or longer than {@link #MAX_TIMEOUT}
     */
    public static WaitPolicy lowLatency(Duration timeout) {
        return new WaitPolicy(BackoffPolicy.LOW_LATENCY, nanos(timeout));
    }

    /**
     * The default policy: the backoff of a wait for a peer that nobody wakes ({@link BackoffPolicy#SPIN_THEN_YIELD}:
     * a short spin, then yields, then parks) and the timeout of {@value #TIMEOUT_PROPERTY}, or {@value #DEFAULT_TIMEOUT_MS} ms when the
     * property is unset. A stream's waits are waits for a peer (a completion, a ready word): a long spin would hold
     * the CPU the thread that posts the stream's next work needs.
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
            if (ms > MAX_TIMEOUT.toMillis()) {
                throw new IllegalArgumentException(TIMEOUT_PROPERTY + " must be at most " + MAX_TIMEOUT.toMillis()
                        + " ms (Long.MAX_VALUE nanoseconds), got " + ms);
            }
        }
        return new WaitPolicy(BackoffPolicy.SPIN_THEN_YIELD, Duration.ofMillis(ms).toNanos());
    }

    /**
     * This policy with another timeout.
     *
     * @param timeout the new timeout, positive and at most {@link #MAX_TIMEOUT}
     * @return the policy
     * @throws NullPointerException     if the timeout is null
     * @throws IllegalArgumentException if the timeout is not positive or longer than {@link #MAX_TIMEOUT}
     */
    public WaitPolicy withTimeout(Duration timeout) {
        return new WaitPolicy(backoff, nanos(timeout));
    }

    /** A timeout in nanoseconds, refusing what a {@code long} of nanoseconds cannot hold. */
    private static long nanos(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        if (timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("timeout must be at most " + MAX_TIMEOUT
                    + " (Long.MAX_VALUE nanoseconds), got " + timeout);
        }
        return timeout.toNanos();
    }
}

package dev.gdasync.apps.pingpong;

/**
 * The fixed-length compute task of {@code --compute-us} (LibMP's KERNEL_TIME): a busy loop on the thread
 * that runs it, the stream's thread in {@code sa}, the CPU thread in {@code host} and {@code mpj}.
 */
final class Compute implements Runnable {
    private final long nanos;

    /**
     * @param micros the task's length in microseconds (0: a task that returns at once)
     */
    Compute(double micros) {
        this.nanos = Math.round(micros * 1000);
    }

    /** @return whether the task does anything */
    boolean isEnabled() {
        return nanos > 0;
    }

    @Override
    public void run() {
        spin(nanos);
    }

    /**
     * Busy-waits.
     *
     * @param nanos how long
     */
    static void spin(long nanos) {
        if (nanos <= 0) {
            return;
        }
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }
}

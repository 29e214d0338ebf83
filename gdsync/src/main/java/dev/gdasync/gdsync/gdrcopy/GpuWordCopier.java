package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDeviceToHost;
import dev.gdasync.gdsync.cuda.CudaException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The fallback of {@link GpuWords}: one daemon thread that copies every copied word from device memory into
 * its host word, then sleeps for the interval, and waits without spinning while there are no words.
 *
 * <p>A copy and the store into the host word happen under this object's lock, so the thread and
 * {@link GpuWordMirror#refresh()} never store an older value after a newer one, and a word that
 * {@link #remove}d returns is never written again.
 */
final class GpuWordCopier implements Runnable {
    /** How long {@link #close()} waits for the thread before leaving it behind. */
    private static final long JOIN_MILLIS = 10_000;

    private final CudaDeviceToHost copies;
    private final long intervalNanos;
    private final Arena stagingArena = Arena.ofShared();
    private final MemorySegment staging = stagingArena.allocate(8, 8);
    private final List<GpuWordMirror> words = new ArrayList<>();
    private final Thread thread;
    private boolean running = true;

    GpuWordCopier(CudaContext context, long intervalNanos) {
        this.copies = CudaDeviceToHost.open(context);
        this.intervalNanos = intervalNanos;
        this.thread = Thread.ofPlatform().daemon().name("gdasync-gpu-words").unstarted(this);
        thread.start();
    }

    /**
     * Copies a word now.
     *
     * @throws CudaException if the copy fails
     */
    synchronized void copy(GpuWordMirror mirror) {
        MemorySegment bytes = staging.asSlice(0, mirror.width());
        copies.copy(mirror.deviceAddress(), bytes);
        if (mirror.width() == 4) {
            mirror.word().set32(bytes.get(JAVA_INT, 0), true);
        } else {
            mirror.word().set64(bytes.get(JAVA_LONG, 0), true);
        }
    }

    /** Starts refreshing a word. */
    synchronized void add(GpuWordMirror mirror) {
        words.add(mirror);
        notifyAll();
    }

    /** Stops refreshing a word; once this returns, the word's host memory is not written again. */
    synchronized void remove(GpuWordMirror mirror) {
        words.remove(mirror);
    }

    @Override
    public void run() {
        while (true) {
            synchronized (this) {
                while (running && words.isEmpty()) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (!running) {
                    return;
                }
                for (int i = words.size() - 1; i >= 0; i--) {
                    GpuWordMirror mirror = words.get(i);
                    try {
                        copy(mirror);
                    } catch (RuntimeException e) {
                        words.remove(i);
                        String why = e.getMessage();
                        mirror.fail(why);
                        System.err.println("gdasync: GPU word " + mirror + " is no longer refreshed: " + why);
                    }
                }
            }
            LockSupport.parkNanos(this, intervalNanos);
        }
    }

    /**
     * Stops the thread and destroys the copier's stream. A thread that does not end within 10 s (a driver
     * call that hangs) is left behind, with its memory, and reported.
     */
    void close() {
        synchronized (this) {
            running = false;
            words.clear();
            notifyAll();
        }
        LockSupport.unpark(thread);
        try {
            if (!thread.join(java.time.Duration.ofMillis(JOIN_MILLIS))) {
                System.err.println("gdasync: the GPU word copier did not stop within " + TimeUnit.MILLISECONDS.toSeconds(
                        JOIN_MILLIS) + " s (a device-to-host copy hangs?); it is left behind");
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        try {
            copies.close();
        } finally {
            stagingArena.close();
        }
    }
}

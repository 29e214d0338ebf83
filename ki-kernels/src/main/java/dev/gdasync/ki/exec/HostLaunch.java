package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.trace.KiBlockEvent;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** One launch on the host executor: counts its blocks down, keeps the first exception, reports. */
final class HostLaunch implements KiLaunch {
    final HostKernel kernel;
    private final String executor;
    private final AtomicInteger remaining;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicReference<Integer> failedBlock = new AtomicReference<>();
    private final CountDownLatch done = new CountDownLatch(1);

    HostLaunch(HostKernel kernel, String executor) {
        this.kernel = kernel;
        this.executor = executor;
        this.remaining = new AtomicInteger(kernel.blocks() - 1);
    }

    /** Runs a block; every block but 0 counts itself down (block 0 is the dispatcher, which waits). */
    void runBlock(int block, BlockContext ctx) {
        KiBlockEvent event = new KiBlockEvent();
        event.begin();
        try {
            kernel.runBlock(block, ctx);
            if (event.shouldCommit()) {
                event.kernel = kernel.name();
                event.block = block;
                event.commit();
            }
        } catch (Throwable t) {
            if (failure.compareAndSet(null, t)) {
                failedBlock.set(block);
            }
        } finally {
            if (block != 0) {
                remaining.decrementAndGet();
            }
        }
    }

    int remainingBlocks() {
        return remaining.get();
    }

    void finish() {
        done.countDown();
    }

    @Override
    public boolean isDone() {
        return done.getCount() == 0;
    }

    @Override
    public void join() {
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KiException("interrupted while joining " + kernel.name() + " on " + executor, e);
        }
        check();
    }

    @Override
    public void join(Duration limit) {
        try {
            if (!done.await(limit.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new KiException(kernel.name() + " on " + executor + " had not ended after " + limit.toMillis() + " ms",
                        (KiTable.Status) null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KiException("interrupted while joining " + kernel.name() + " on " + executor, e);
        }
        check();
    }

    private void check() {
        Throwable t = failure.get();
        if (t != null) {
            throw new KiException(kernel.name() + " on " + executor + ": block " + failedBlock.get() + " failed: " + t, t);
        }
        KiTable.Status status = kernel.table().status();
        if (!status.isOk()) {
            throw KiException.of(executor, kernel.name(), kernel.table(), status);
        }
    }

    @Override
    public String toString() {
        return kernel.name() + " launch (" + kernel.blocks() + " blocks) on " + executor;
    }
}

package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.gdsync.cuda.CudaResults;
import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.KiLaunch;
import jcuda.driver.CUevent;
import jcuda.driver.JCudaDriver;

import java.time.Duration;

/**
 * A KI kernel running on a GPU: an event recorded on the executor's stream right after the kernel tells
 * when it has ended; then the table's status says how.
 */
final class CudaLaunch implements KiLaunch {
    private final CudaContext context;
    private final String executor;
    private final String kernel;
    private final KiTable table;
    private final CUevent event;
    private final Runnable onEnd;
    private boolean ended;
    private int result = CudaResults.SUCCESS;
    private String failedCall;

    /**
     * @param context  the executor's context
     * @param executor the executor's name, for messages
     * @param kernel   the kernel's label, for messages
     * @param table    the table it runs over
     * @param event    recorded after the kernel
     * @param onEnd    what to release once the kernel has ended (scratch memory), run once
     */
    CudaLaunch(CudaContext context, String executor, String kernel, KiTable table, CUevent event, Runnable onEnd) {
        this.context = context;
        this.executor = executor;
        this.kernel = kernel;
        this.table = table;
        this.event = event;
        this.onEnd = onEnd;
    }

    @Override
    public boolean isDone() {
        synchronized (this) {
            if (ended) {
                return true;
            }
        }
        context.makeCurrent();
        int rc = JCudaDriver.cuEventQuery(event);
        if (rc == CudaResults.NOT_READY) {
            return false;
        }
        end(rc, "cuEventQuery");
        return true;
    }

    @Override
    public void join() {
        boolean wait;
        synchronized (this) {
            wait = !ended;
        }
        if (wait) {
            context.makeCurrent();
            end(JCudaDriver.cuEventSynchronize(event), "cuEventSynchronize");
        }
        report();
    }

    @Override
    public void join(Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.LOW_LATENCY);
        while (!isDone()) {
            if (System.nanoTime() - deadline > 0) {
                throw new KiException(kernel + " on " + executor + " had not ended after " + limit + "; it is still "
                        + "running (its waits end by their timeouts): join it again", (KiTable.Status) null);
            }
            idler.idle();
        }
        report();
    }

    /**
     * Marks the launch ended (the stream was synchronized) and releases what it held.
     *
     * @param rc   the result that says how it ended
     * @param call the call that gave the result
     */
    void end(int rc, String call) {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            result = rc;
            failedCall = call;
        }
        try {
            JCudaDriver.cuEventDestroy(event);
        } finally {
            onEnd.run();
        }
    }

    private void report() {
        int rc;
        String call;
        synchronized (this) {
            rc = result;
            call = failedCall;
        }
        if (rc != CudaResults.SUCCESS) {
            CudaException cause = CudaException.of(rc, call);
            throw new KiException(kernel + " on " + executor + " failed: " + cause.getMessage(), cause);
        }
        KiTable.Status status = table.status();
        if (!status.isOk()) {
            throw KiException.of(executor, kernel, table, status);
        }
    }

    @Override
    public String toString() {
        return kernel + " on " + executor;
    }
}

package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.coll.shm.ShmTask;

/**
 * One posted collective on a {@link Communicator}: complete once every transfer of this rank's part is done.
 * Completed by {@link Communicator#test} or {@link Communicator#wait}; a failed request reports its failure there.
 * Driven by the thread that drives its communicator's {@link Collectives}.
 */
public final class CollRequest {
    private final int context;
    /** The message path's schedule, or null. */
    private final CollOp op;
    /** The shared-memory path's task, or null. */
    private final ShmTask task;

    CollRequest(int context, CollOp op) {
        this.context = context;
        this.op = op;
        this.task = null;
    }

    CollRequest(int context, ShmTask task) {
        this.context = context;
        this.op = null;
        this.task = task;
    }

    CollOp op() {
        return op;
    }

    ShmTask task() {
        return task;
    }

    int context() {
        return context;
    }

    /** @return whether every transfer of this rank's part has finished, with or without an error */
    public boolean isComplete() {
        return op != null ? op.isFinished() : task.isFinished();
    }

    /** @return what the request is: the collective, the communicator's context and the collective's number */
    @Override
    public String toString() {
        return op != null ? op.toString() : task.toString();
    }
}

package dev.gdasync.libmp.coll;

/**
 * One posted collective on a {@link Communicator}: complete once every transfer of this rank's part is done.
 * Completed by {@link Communicator#test} or {@link Communicator#wait}; a failed request reports its failure there.
 * Driven by the thread that drives its communicator's {@link Collectives}.
 */
public final class CollRequest {
    private final CollOp op;

    CollRequest(CollOp op) {
        this.op = op;
    }

    CollOp op() {
        return op;
    }

    /** @return whether every transfer of this rank's part has finished, with or without an error */
    public boolean isComplete() {
        return op.isFinished();
    }

    /** @return what the request is: the collective, the communicator's context and the collective's number */
    @Override
    public String toString() {
        return op.toString();
    }
}

package dev.gdasync.libmp.coll.shm;

/** A barrier: publishing and every member's arrival are the whole collective. */
final class BarrierTask extends ShmTask {
    BarrierTask(ShmChannel ch, ShmCall call) {
        super(ch, call);
    }

    @Override
    int publishPayload() {
        return ShmArea.PATH_NONE;
    }

    @Override
    boolean work() {
        return true;
    }

    @Override
    boolean exposesBuffers() {
        return false;
    }
}

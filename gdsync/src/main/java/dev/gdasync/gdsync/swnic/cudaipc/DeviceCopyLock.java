package dev.gdasync.gdsync.swnic.cudaipc;

/**
 * The one lock of the process under which executors copy to or from device memory, and under which
 * device memory stops being usable. An executor takes it, checks that every buffer of its request is
 * still registered or mapped, queues its copies and waits for them; whoever retires memory an executor
 * may use (a region that closes, a peer mapping that is unmapped) first marks it unusable, then
 * {@link #quiesce() quiesces}, and only then unmaps or frees it. So no copy ever runs on freed memory.
 *
 * <p>Free of CUDA types, so that host regions can quiesce without loading the CUDA binding. Host-only
 * work never takes it: it is taken when device memory is copied, and when a registered host region
 * closes (once, uncontended when no device copy runs).
 */
public final class DeviceCopyLock {
    public static final Object LOCK = new Object();

    private DeviceCopyLock() {
    }

    /** Returns once every device copy that started before the call has ended. */
    public static void quiesce() {
        synchronized (LOCK) {
            // Entering waits for the copy in progress; nothing more to do.
            assert Thread.holdsLock(LOCK);
        }
    }
}

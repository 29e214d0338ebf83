package dev.gdasync.libmp.mpj;

import mpjdev.javampjdev.MPJDev;
import xdev.Device;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CountDownLatch;

/**
 * MPJ Express's one device slot, the public static {@code mpjdev.javampjdev.MPJDev.dev}: MPJ's {@code MPI.Init} uses
 * the device it finds there, and builds one of its own devices by name only when the slot is empty.
 *
 * <p>MPJ allows {@code MPI.Init} again after {@code MPI.Finalize} (its own test suite does it ten times in a row, then
 * once per case), but its {@code MPJDev.finish} empties the slot once the device's {@code finish} has returned, and the
 * next {@code MPI.Init} would then look for a device named {@code gdasync} among its own and fail. So after the
 * device's {@code finish}, a short-lived thread takes the lock MPJ's {@code MPJDev.init} reads the slot under, waits
 * until {@code MPJDev.finish} has emptied it (a few instructions after the device's {@code finish} returned) and puts
 * the device back: a next {@code MPI.Init} waits for that lock, so it always finds the device.
 */
final class MpjDeviceSlot {
    /** The longest the thread waits for MPJ to empty the slot: it does so at once unless the process is stopped. */
    private static final long EMPTIED_WITHIN_NANOS = 10_000_000_000L;
    private static final VarHandle SLOT;

    static {
        try {
            SLOT = MethodHandles.publicLookup().findStaticVarHandle(MPJDev.class, "dev", Device.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private MpjDeviceSlot() {
    }

    /**
     * Puts the device in the slot, before the program's first {@code MPI.Init}.
     *
     * @throws IllegalStateException if MPJ already has a device
     */
    static void install(GdasyncDevice device) {
        synchronized (MPJDev.class) {
            Device there = (Device) SLOT.getVolatile();
            if (there != null) {
                throw new IllegalStateException("MPJ Express already has a device (" + there
                        + "): install the gdasync device before MPI.Init");
            }
            SLOT.setVolatile(device);
        }
    }

    /**
     * Called at the end of the device's {@code finish}: once MPJ has emptied the slot, puts the device back, so that a
     * later {@code MPI.Init} of the program finds it. Nothing when the slot does not hold this device (one MPJ was not
     * given through {@link #install}). Returns once the lock is held, before MPJ empties the slot.
     */
    static void putBackAfterFinish(GdasyncDevice device) {
        if (SLOT.getVolatile() != device) {
            return;
        }
        CountDownLatch holding = new CountDownLatch(1);
        Thread.ofPlatform().daemon().name("gdasync-mpj-device-slot").start(() -> {
            // MPJDev.init reads the slot under this lock: a next MPI.Init waits here until the device is back.
            synchronized (MPJDev.class) {
                holding.countDown();
                long deadline = System.nanoTime() + EMPTIED_WITHIN_NANOS;
                while (SLOT.getVolatile() == device && System.nanoTime() - deadline < 0) {
                    Thread.yield();
                }
                if (SLOT.getVolatile() == null) {
                    SLOT.setVolatile(device);
                }
            }
        });
        boolean interrupted = false;
        while (true) {
            try {
                holding.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}

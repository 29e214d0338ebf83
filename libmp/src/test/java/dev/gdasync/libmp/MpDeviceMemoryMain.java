package dev.gdasync.libmp;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.DeviceRegion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A child JVM of {@link MpDeviceMemoryTest}: two in-JVM ranks exchange messages between GPU buffers of their
 * Mps (against the stand-in driver), then check the Mp's rules for GPU memory. Prints {@code ok <name>} per
 * check, {@code FAIL ...} on a failure, and {@code end}. Argument: a scratch folder.
 */
public final class MpDeviceMemoryMain {
    private static final int SIZE = 5000;

    private MpDeviceMemoryMain() {
    }

    /**
     * @param args the scratch folder
     */
    public static void main(String[] args) {
        try {
            run(Path.of(args[0]));
        } catch (Throwable t) {
            System.out.println("FAIL " + t);
            t.printStackTrace(System.out);
        }
        System.out.println("end");
    }

    private static byte[] pattern(int seed) {
        byte[] b = new byte[SIZE];
        for (int i = 0; i < SIZE; i++) {
            b[i] = (byte) (seed * 31 + i * 7);
        }
        return b;
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    private static void run(Path base) throws Exception {
        AtomicReferenceArray<DeviceRegion> regions = new AtomicReferenceArray<>(2);
        Ranks.run(2, base, mp -> {
            int me = mp.rank();
            int peer = 1 - me;
            try (CudaContext context = CudaContext.retainPrimary(CudaDriver.open().device(0)); Arena arena = Arena.ofConfined()) {
                DeviceRegion d = DeviceRegion.of(mp.allocateDevice(context.device().ordinal(), 65536));
                regions.set(me, d);
                MpRegistration reg = mp.register(d);
                MemorySegment staging = arena.allocate(SIZE);
                if (me == 0) {
                    staging.copyFrom(MemorySegment.ofArray(pattern(1)));
                    d.copyFromHost(0, staging);
                    MpRequest reply = mp.irecv(d.pointer(32768, SIZE), peer, reg);
                    mp.barrier();
                    mp.wait(mp.isend(d.pointer(0, SIZE), peer, reg));
                    mp.wait(reply);
                    check(reply.byteCount() == SIZE, "reply of " + reply.byteCount() + " bytes");
                    d.copyToHost(32768, staging);
                    check(staging.mismatch(MemorySegment.ofArray(pattern(1))) == -1, "the reply is the message");
                    System.out.println("ok device-to-device-and-back");
                } else {
                    MpRequest in = mp.irecv(d.pointer(16384, SIZE), peer, reg);
                    mp.barrier();
                    mp.wait(in);
                    d.copyToHost(16384, staging);
                    check(staging.mismatch(MemorySegment.ofArray(pattern(1))) == -1, "the message arrived in GPU memory");
                    mp.wait(mp.isend(d.pointer(16384, SIZE), peer, reg));
                }
                mp.barrier();
                // Rules: another Mp's memory, a range past the registration, free twice, register after free.
                DeviceRegion theirs = regions.get(peer);
                try {
                    mp.register(theirs);
                    check(false, "another Mp's GPU memory was registered");
                } catch (IllegalArgumentException e) {
                    check(e.getMessage().contains("is not GPU memory from this Mp's allocateDevice()"), e.getMessage());
                }
                try {
                    d.pointer(65000, SIZE);
                    check(false, "a pointer past the allocation");
                } catch (IndexOutOfBoundsException e) {
                    // refused before any request exists
                }
                MemorySegment outside = MemorySegment.ofAddress(d.address() + 65536 - 100).reinterpret(SIZE);
                try {
                    mp.isend(outside, peer, reg);
                    check(false, "a send past the registration was posted");
                } catch (IllegalArgumentException e) {
                    // the Mp checks buffers against their registration
                }
                mp.barrier();
                mp.deregister(reg);
                mp.free(d);
                check(!d.isOpen(), "free closes the region");
                try {
                    mp.free(d);
                    check(false, "freed twice");
                } catch (IllegalArgumentException e) {
                    check(e.getMessage().contains("was not allocated by this Mp, or was freed"), e.getMessage());
                }
                try {
                    mp.register(d);
                    check(false, "freed memory was registered");
                } catch (IllegalArgumentException e) {
                    check(e.getMessage().contains("or was freed"), e.getMessage());
                }
                System.out.println("ok rules-rank-" + me);
                mp.barrier();
            }
        });
        System.out.println("ok ranks-finished");
    }
}

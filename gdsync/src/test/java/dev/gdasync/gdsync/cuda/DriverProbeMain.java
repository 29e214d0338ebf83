package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.MemoryWord;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A child JVM of {@link FakeCudaDriverTest}: opens the CUDA driver and prints what happened, one
 * {@code key: value} line per fact.
 */
public final class DriverProbeMain {
    private DriverProbeMain() {
    }

    /**
     * @param args {@code open}, or {@code map} to also translate words through a {@link CudaAddressMap}
     */
    public static void main(String[] args) {
        try {
            System.out.println("reason: " + CudaDriver.unavailableReason().orElse("none"));
            CudaDriver driver = CudaDriver.open();
            System.out.println("driver: " + driver);
            for (CudaDevice d : driver.devices()) {
                System.out.println("device: " + d + " cooperative=" + d.cooperativeLaunch() + " hostPointer="
                        + d.hostPointerForRegisteredMemory() + " unified=" + d.unifiedAddressing());
            }
            if (args.length > 0 && args[0].equals("map")) {
                map(driver);
            }
        } catch (CudaException e) {
            System.out.println("CudaException: " + e.getMessage());
            System.out.println("again: " + CudaDriver.unavailableReason().orElse("none"));
        } catch (Throwable e) {
            System.out.println("unexpected: " + e);
            e.printStackTrace(System.out);
        }
        System.out.println("end");
    }

    private static void map(CudaDriver driver) {
        try (CudaContext context = CudaContext.retainPrimary(driver.device(0));
             Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(10_000, 4096);
            MemorySegment b = arena.allocate(64, 8);
            try (CudaAddressMap map = new CudaAddressMap(context)) {
                MemoryWord w1 = MemoryWord.word32(a, 4100, "w1");
                MemoryWord w2 = MemoryWord.word64(a, 8, "w2");
                MemoryWord w3 = MemoryWord.word32(b, 0, "w3");
                System.out.println("w1: " + (map.addressOf(w1) - w1.address()));
                System.out.println("w2: " + (map.addressOf(w2) - w2.address()));
                System.out.println("w3: " + (map.addressOf(w3) - w3.address()));
                System.out.println("a: 0x" + Long.toHexString(a.address()));
                System.out.println("ranges: " + map.rangeCount());
            }
            System.out.println("closed");
        }
    }
}

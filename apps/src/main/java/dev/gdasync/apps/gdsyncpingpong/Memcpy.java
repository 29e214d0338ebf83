package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.apps.common.Medians;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.swnic.SoftwareNic;

import java.lang.foreign.MemorySegment;

/** Single-thread memcpy between two host regions: the bandwidth reference. */
final class Memcpy implements AutoCloseable {
    private final HostRegion a;
    private final HostRegion b;

    Memcpy(SoftwareNic nic, int maxBytes) {
        a = nic.allocateHost(maxBytes);
        b = nic.allocateHost(maxBytes);
    }

    double oneCopyMicros(int bytes, int iters) {
        MemorySegment src = a.segment();
        MemorySegment dst = b.segment();
        double[] runs = new double[5];
        for (int w = 0; w < 2; w++) {
            copyLoop(src, dst, bytes, iters);
        }
        for (int r = 0; r < runs.length; r++) {
            runs[r] = copyLoop(src, dst, bytes, iters) / 1000.0 / iters;
        }
        return Medians.of(runs);
    }

    private static long copyLoop(MemorySegment src, MemorySegment dst, int bytes, int iters) {
        long t = System.nanoTime();
        for (int i = 0; i < iters; i++) {
            MemorySegment.copy(src, 0, dst, 0, bytes);
        }
        return System.nanoTime() - t;
    }

    @Override
    public void close() {
        a.close();
        b.close();
    }
}

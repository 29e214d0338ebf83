package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.shmem.ShmemDevice;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.testutil.KilledMidCall;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The rank main of {@link ShmemKilledMidCallTest}: every blocking call of shmem, in its host, stream and kernel (KI)
 * forms, made by PEs 0 and 2 while PE 1 is killed (see {@link KilledMidCall}).
 */
public final class ShmemKilledMain {
    /** The cases by name; each makes a 1 MiB heap and what the call waits on. */
    public static final Map<String, KilledMidCall.Setup> CASES = new LinkedHashMap<>();
    static {
        CASES.put("barrierAll", mp -> {
            Shmem s = heap(mp);
            return s::barrierAll;
        });
        CASES.put("syncAll", mp -> {
            Shmem s = heap(mp);
            return s::syncAll;
        });
        CASES.put("waitUntil", mp -> {
            Shmem s = heap(mp);
            MemorySegment flag = s.calloc(1, 8);
            return () -> s.waitUntil(flag, ShmemCmp.EQ, 1);
        });
        CASES.put("waitUntilAll", mp -> {
            Shmem s = heap(mp);
            MemorySegment flags = s.calloc(4, 8);
            return () -> s.waitUntilAll(flags, null, ShmemCmp.EQ, 1);
        });
        CASES.put("signalWaitUntil", mp -> {
            Shmem s = heap(mp);
            MemorySegment sig = s.calloc(1, 8);
            return () -> s.signalWaitUntil(sig, ShmemCmp.GE, 1);
        });
        CASES.put("malloc", mp -> {
            Shmem s = heap(mp);
            return () -> s.malloc(64);
        });
        CASES.put("free", mp -> {
            Shmem s = heap(mp);
            MemorySegment block = s.malloc(64);
            return () -> s.free(block);
        });
        CASES.put("barrierAllOnStream", mp -> {
            Shmem s = heap(mp);
            HostStream stream = HostStream.create("kill-barrier-" + mp.rank());
            s.barrierAllOnStream(stream);
            stream.synchronize();
            return () -> {
                s.barrierAllOnStream(stream);
                stream.synchronize();
            };
        });
        CASES.put("signalWaitUntilOnStream", mp -> {
            Shmem s = heap(mp);
            MemorySegment sig = s.calloc(1, 8);
            HostStream stream = HostStream.create("kill-signal-" + mp.rank());
            return () -> {
                s.signalWaitUntilOnStream(sig, ShmemCmp.EQ, 1, stream);
                stream.synchronize();
            };
        });
        CASES.put("ki.waitUntil", mp -> {
            Shmem s = heap(mp);
            MemorySegment flag = s.calloc(1, 8);
            HostKiExecutor executor = HostKiExecutor.create("kill-ki-" + mp.rank(),
                    HostKiExecutor.Options.defaults().withAfterRing(mp::progressStoreRings));
            return () -> {
                // The layer's timeout, as the other cases: the job's failure aborts the kernel's wait, not its bound.
                ShmemKi ki = s.kiPrepare(executor, 1, 4, KilledMidCall.LAYER_TIMEOUT);
                try {
                    executor.shmem(ki.table(), ki.state(), 1, ctx -> ctx.waitUntil(flag, ShmemDevice.CMP_EQ, 1))
                            .join(Duration.ofSeconds(120));
                } finally {
                    ki.complete(); // throws the job's failure (the listener aborted the launch) over the launch's
                }
            };
        });
    }

    private ShmemKilledMain() {
    }

    private static Shmem heap(Mp mp) {
        Shmem s = Shmem.init(mp, 1L << 20);
        s.barrierAll();
        return s;
    }

    /**
     * @param args see {@link KilledMidCall#rankMain}
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        KilledMidCall.rankMain(args, CASES);
    }
}

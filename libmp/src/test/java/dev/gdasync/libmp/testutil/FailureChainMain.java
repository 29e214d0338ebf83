package dev.gdasync.libmp.testutil;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * A rank of a chain of waits: rank r waits for a message from rank r + 1, which never sends; the last rank
 * sleeps until it is killed. Prints {@code waiting} once its receive is posted, then, when its wait fails,
 * {@code FAILED <System.nanoTime()> <message>} and exits with 1 (after {@code Mp.close()}); the nanoTime is
 * comparable with the test's on one machine (both read the monotonic clock).
 *
 * <p>Arguments: the shared-memory base.
 */
public final class FailureChainMain {
    private FailureChainMain() {
    }

    public static void main(String[] args) throws Exception {
        Path base = Path.of(args[0]);
        int status = 1;
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
            MpConfig cfg = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base));
            int me = boot.rank();
            try (Mp mp = Mp.init(boot, cfg)) {
                MemorySegment buf = mp.allocate(4096);
                MpRegistration reg = mp.register(buf);
                System.out.println("dir " + ((dev.gdasync.gdsync.swnic.SoftwareNic) mp.nic()).directory().processDirectory());
                if (me == boot.size() - 1) {
                    System.out.println("waiting");
                    System.out.flush();
                    Thread.sleep(600_000);
                    return;
                }
                MpRequest r = mp.irecv(buf.asSlice(0, 8), me + 1, reg);
                System.out.println("waiting");
                System.out.flush();
                try {
                    mp.wait(r);
                    System.out.println("UNEXPECTED the receive completed");
                    status = 3;
                } catch (MpException e) {
                    System.out.println("FAILED " + System.nanoTime() + " " + e.getMessage());
                    System.out.flush();
                }
            }
        } catch (RuntimeException e) {
            System.out.println("ERROR " + e);
            status = 2;
        }
        System.out.flush();
        System.exit(status);
    }
}

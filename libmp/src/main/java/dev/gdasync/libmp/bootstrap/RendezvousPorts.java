package dev.gdasync.libmp.bootstrap;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks the port of a job's rendezvous before rank 0 binds it. The port is free when picked, and is taken
 * from below the kernel's ephemeral range (32768 and up on Linux): a port that {@code bind(0)} handed out
 * and that was closed again goes to the next {@code bind(0)} soon, and processes bind port 0 all the time
 * (UCX workers listen on one each), so such a port could be taken again before rank 0 binds it.
 */
public final class RendezvousPorts {
    /** The lowest port picked. */
    static final int LOW = 20_000;
    /** One past the highest port picked: the start of Linux's default ephemeral range, less a margin. */
    static final int HIGH = 32_000;
    private static final int ATTEMPTS = 200;

    private RendezvousPorts() {
    }

    /**
     * @param address the address rank 0 will bind
     * @return a port free on that address now, in [{@value #LOW}, {@value #HIGH})
     * @throws IllegalStateException if no free port was found in {@value #ATTEMPTS} random tries
     */
    public static int pick(InetAddress address) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < ATTEMPTS; i++) {
            int port = random.nextInt(LOW, HIGH);
            try (ServerSocket s = new ServerSocket(port, 1, address)) {
                return s.getLocalPort();
            } catch (IOException e) {
                // taken: try another
            }
        }
        throw new IllegalStateException("no free port in [" + LOW + ", " + HIGH + ") on " + address + " after "
                + ATTEMPTS + " tries");
    }
}

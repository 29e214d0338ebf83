package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.gdsync.concurrent.ThreadAffinity;
import dev.gdasync.gdsync.stream.HostStream;

import java.util.List;

/** Pins the stream threads of the ring=stream ping-pong to distinct CPUs. */
final class StreamPinning {
    private StreamPinning() {
    }

    /**
     * The CPU a side's ping-pong thread runs on: the initiator's the first allowed CPU, the responder's
     * the second; -1 when pinning is off or there are fewer than two CPUs. Call before pinning anything.
     */
    static int cpuFor(boolean initiator, boolean pin) {
        if (!pin || !ThreadAffinity.isSupported()) {
            return -1;
        }
        List<Integer> cpus = ThreadAffinity.allowedCpus();
        return cpus.size() < 2 ? -1 : cpus.get(initiator ? 0 : 1);
    }

    /**
     * Pins a stream's thread, which plays the ring=stream ping-pong, to the side's CPU. The CPU thread
     * that prepares for it stays free to run anywhere. (The ring=cpu loop is not pinned: on the 2-CPU
     * machines this was measured on, pinned CPU-rung loops ran slower than free ones.)
     */
    static void pin(int cpu, HostStream stream) {
        if (cpu >= 0) {
            stream.launch(() -> ThreadAffinity.pinCurrentThread(cpu));
            stream.synchronize();
        }
    }
}

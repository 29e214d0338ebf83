package dev.gdasync.gdsync.swnic.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Which host a process runs on, as the software NIC decides between shared memory and UCX: the kernel's
 * boot id and the process's network namespace. Two processes on one machine but in different network
 * namespaces count as different hosts: that is how tests and benchmarks run several "hosts" on one machine
 * (scripts/netns), and such processes cannot assume they share {@code /dev/shm} either.
 */
public final class HostIdentity {
    private static final String CURRENT = read();

    private HostIdentity() {
    }

    /** @return this process's host identity, e.g. {@code 6f1c...:net:[4026531840]} */
    public static String current() {
        return CURRENT;
    }

    /**
     * @param other another process's host identity
     * @return whether it runs on this machine (the same boot), whatever its network namespace
     */
    public static boolean sameMachine(String other) {
        int a = CURRENT.indexOf(':');
        int b = other.indexOf(':');
        return a > 0 && a == b && CURRENT.regionMatches(0, other, 0, a) && !CURRENT.startsWith("unknown-boot");
    }

    private static String read() {
        String boot;
        try {
            boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();
        } catch (IOException | RuntimeException e) {
            boot = "unknown-boot";
        }
        String netns;
        try {
            netns = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
        } catch (IOException | RuntimeException e) {
            netns = "unknown-netns";
        }
        return boot + ":" + netns;
    }
}

package dev.gdasync.apps.pingpong;

import java.util.List;
import java.util.Map;

/**
 * {@code floor}: the C flag hand-off ({@code cpeers/floor.c}, built with gcc at first use). Two processes share one
 * mapping; each writes its payload and then a sequence number the other spins on: one copy, one release store, the
 * loads that see it, nothing else. No messaging library can hand a message over faster on the same CPUs; every
 * mode's ratio to it says how much the library adds.
 */
final class FloorPeer implements CPeer {
    private final String binary;
    private final int[] cpus;

    /**
     * @param binary the built program
     * @param cpus   the CPUs of rank 0 and rank 1, or -1s
     */
    FloorPeer(String binary, int[] cpus) {
        this.binary = binary;
        this.cpus = cpus.clone();
    }


    @Override
    public String label() {
        return "floor";
    }

    @Override
    public String describe() {
        return "floor: a C flag hand-off between two spinning processes (payload copy, release store, acquire load)";
    }

    @Override
    public List<List<String>> commands(int bytes, int iters) {
        return List.of(List.of(binary, String.valueOf(bytes), String.valueOf(iters), String.valueOf(CPeer.warmupFor(iters)),
                String.valueOf(cpus[0]), String.valueOf(cpus[1])));
    }

    @Override
    public Map<String, String> environment() {
        return Map.of();
    }

    @Override
    public CPeerRun parse(String output, int iters) {
        return TripsOutput.parse("floor", output, iters);
    }
}

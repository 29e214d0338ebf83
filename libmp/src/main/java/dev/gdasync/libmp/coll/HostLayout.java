package dev.gdasync.libmp.coll;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where the members of a communicator run: the host of each member (as the engine knows it), the members of each
 * host in rank order, and each host's leader (its lowest member). Hosts are listed in the order of their first
 * member, so every member derives the same layout.
 */
final class HostLayout {
    private final int[] hostOf;
    private final Map<Integer, List<Integer>> members = new LinkedHashMap<>();

    private HostLayout(int[] hostOf) {
        this.hostOf = hostOf;
        for (int i = 0; i < hostOf.length; i++) {
            members.computeIfAbsent(hostOf[i], h -> new ArrayList<>()).add(i);
        }
    }

    /**
     * @param engine     the engine that knows the hosts
     * @param worldRanks the communicator's members
     * @return their layout
     */
    static HostLayout of(Engine engine, int[] worldRanks) {
        int[] hostOf = new int[worldRanks.length];
        for (int i = 0; i < worldRanks.length; i++) {
            hostOf[i] = engine.hostOf(worldRanks[i]);
        }
        return new HostLayout(hostOf);
    }

    /**
     * @param hostOf the host of each member
     * @return their layout
     */
    static HostLayout of(int[] hostOf) {
        return new HostLayout(hostOf.clone());
    }

    /** @return whether the members run on more than one host */
    boolean spansHosts() {
        return members.size() > 1;
    }

    /** @return the hosts, in the order of their first member */
    List<Integer> hosts() {
        return List.copyOf(members.keySet());
    }

    /**
     * @param member a member
     * @return its host
     */
    int hostOf(int member) {
        return hostOf[member];
    }

    /**
     * @param host a host of the communicator
     * @return its members, in rank order
     */
    List<Integer> members(int host) {
        return members.get(host);
    }

    /**
     * @param host a host of the communicator
     * @return its leader: its lowest member
     */
    int leader(int host) {
        return members.get(host).getFirst();
    }

    /**
     * @param host a host
     * @return the members on other hosts, in rank order
     */
    List<Integer> elsewhere(int host) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < hostOf.length; i++) {
            if (hostOf[i] != host) {
                out.add(i);
            }
        }
        return out;
    }
}

package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.TrafficCounters;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code pingpong --stats}: a rank's NIC counters as lines, taken before the NIC closes: the NIC's totals, then each
 * queue pair's. The counts cover the whole run, every mode and warm-up included (the modes share the queue pairs).
 */
final class Stats {
    private Stats() {
    }

    /**
     * @param rank this rank
     * @param nic  its NIC, still open
     * @return the lines to print
     */
    static List<String> lines(int rank, Nic nic) {
        List<String> out = new ArrayList<>();
        out.add("stats: rank " + rank + ", NIC " + nic.name() + " (every mode, warm-ups included): " + nic.counters());
        for (Map.Entry<Integer, TrafficCounters> e : nic.queuePairCounters().entrySet()) {
            out.add("stats: rank " + rank + ",   QP " + e.getKey() + ": " + e.getValue());
        }
        return out;
    }
}

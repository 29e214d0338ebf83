package dev.gdasync.gdsync.nic;

import java.util.Map;

/**
 * A NIC's counts as JMX shows them: one MXBean per NIC, named {@code dev.gdasync:type=Nic,name="<nic name>"}
 * ({@link NicMBeans}). JConsole or any JMX client reads the totals and each open queue pair's counts.
 */
public interface NicMXBean {
    /** @return the NIC's name, such as {@code swnic1@4242} */
    String getName();

    /** @return what every queue pair of the NIC has done, closed ones included ({@link Nic#counters()}) */
    TrafficCounters getCounters();

    /** @return each open queue pair's counts, by queue pair number ({@link Nic#queuePairCounters()}) */
    Map<Integer, TrafficCounters> getQueuePairs();
}

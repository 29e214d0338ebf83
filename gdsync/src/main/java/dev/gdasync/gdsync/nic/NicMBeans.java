package dev.gdasync.gdsync.nic;

import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Registers NICs' counts with JMX: one {@link NicMXBean} per NIC in the platform MBean server, named
 * {@code dev.gdasync:type=Nic,name="<nic name>"}.
 *
 * <p>Providers call {@link #registerIfWanted} when a NIC opens: it registers when the JVM runs with
 * {@code -Dgdasync.jmx=true}, or when the platform MBean server is up already (a JMX agent, JConsole attached before
 * the NIC opened). Otherwise it does nothing, because starting the platform MBean server costs about 0.2 s per JVM, a
 * price every rank of every job would pay. A program registers a NIC itself with {@link #register}.
 */
public final class NicMBeans {
    /** The system property that asks every NIC to register at open: {@code -Dgdasync.jmx=true}. */
    public static final String PROPERTY = "gdasync.jmx";
    /** The domain of the names. */
    public static final String DOMAIN = "dev.gdasync";

    private static final System.Logger LOG = System.getLogger(NicMBeans.class.getName());
    private static final AutoCloseable NOTHING = () -> { };

    private NicMBeans() {
    }

    /**
     * @param nic a NIC
     * @return its MXBean's name
     * @throws NullPointerException if the NIC is null
     */
    public static ObjectName nameOf(Nic nic) {
        Objects.requireNonNull(nic, "nic must not be null");
        try {
            return new ObjectName(DOMAIN + ":type=Nic,name=" + ObjectName.quote(nic.name()));
        } catch (JMException e) {
            throw new IllegalStateException("no JMX name for NIC " + nic.name() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Registers a NIC's MXBean in the platform MBean server.
     *
     * @param nic the NIC
     * @return what unregisters it (closing the NIC should close it); closing twice does nothing
     * @throws NullPointerException  if the NIC is null
     * @throws IllegalStateException if JMX refuses (a NIC of that name is registered already)
     */
    public static AutoCloseable register(Nic nic) {
        ObjectName name = nameOf(nic);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            server.registerMBean(new Bean(nic), name);
        } catch (InstanceAlreadyExistsException e) {
            throw new IllegalStateException("an MXBean named " + name + " is registered already", e);
        } catch (JMException e) {
            throw new IllegalStateException("JMX refused the MXBean of " + nic.name() + ": " + e.getMessage(), e);
        }
        return () -> {
            try {
                server.unregisterMBean(name);
            } catch (InstanceNotFoundException e) {
                // closed twice
            }
        };
    }

    /**
     * Registers a NIC if the JVM asked for it ({@code -Dgdasync.jmx=true}) or JMX is up already; a failure is logged,
     * never thrown: counts are never worth a NIC.
     *
     * @param nic the NIC
     * @return what unregisters it, or something that does nothing
     * @throws NullPointerException if the NIC is null
     */
    public static AutoCloseable registerIfWanted(Nic nic) {
        Objects.requireNonNull(nic, "nic must not be null");
        if (!Boolean.getBoolean(PROPERTY) && !platformServerIsUp()) {
            return NOTHING;
        }
        try {
            return register(nic);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "NIC " + nic.name() + " is not visible in JMX: " + e.getMessage());
            return NOTHING;
        }
    }

    /** @return whether the platform MBean server exists (made without costing its start here) */
    private static boolean platformServerIsUp() {
        List<MBeanServer> servers = MBeanServerFactory.findMBeanServer(null);
        return !servers.isEmpty();
    }

    /** The MXBean of one NIC. */
    private static final class Bean implements NicMXBean {
        private final Nic nic;

        Bean(Nic nic) {
            this.nic = nic;
        }

        @Override
        public String getName() {
            return nic.name();
        }

        @Override
        public TrafficCounters getCounters() {
            return nic.counters();
        }

        @Override
        public Map<Integer, TrafficCounters> getQueuePairs() {
            return nic.queuePairCounters();
        }
    }
}

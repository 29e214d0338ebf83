package dev.gdasync.gdsync.ki;

import dev.gdasync.gdsync.nic.SendExecutor;

/**
 * What runs the kernels over KI tables: a GPU stream, or the host KI executor. Tables exported for one
 * executor run in the order they were launched, so a queue pair's sends may be spread over many tables
 * of one executor (each table's sends are rung after the previous table's); tables of different
 * executors could ring out of order, and the prepare-order rule refuses them while earlier sends are
 * unrung.
 */
public interface KiTableExecutor extends SendExecutor {

    /** @return what runs the kernels, for messages */
    @Override
    String name();

    /** @return how this executor names memory words */
    DeviceAddressMap addresses();

    /**
     * Whether this executor's threads run the NIC's work for their own rings ({@code Nic.progressStoreRings}
     * after each plain-store ring: a host KI executor sharing the process with the software NIC). Then the
     * exported sends are not announced to the NIC's agent, which would otherwise poll hot for them; it still
     * finds any ring that nobody ran, at its idle pace.
     *
     * @return whether rings are progressed by the ringing threads
     */
    default boolean progressesOwnRings() {
        return false;
    }
}

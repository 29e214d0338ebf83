/**
 * Descriptors (LibGDSync's {@code gds_descriptor}): SEND, WAIT, WAIT_VALUE32, WRITE_VALUE32, WRITE_MEMORY, and
 * {@link dev.gdasync.gdsync.descriptor.Descriptors}, which checks a list against the queue pairs' order rules and
 * turns it into one batch of memops.
 *
 * <p>Layer: above {@code nic} and {@code memop}, which it may call; streams and libmp call it.
 */
package dev.gdasync.gdsync.descriptor;

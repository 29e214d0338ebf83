/**
 * JMH micro-benchmarks of the software NIC and memops.
 *
 * <p>Layer: benchmarks of gdsync.
 */
package dev.gdasync.apps.jmh;

/**
 * Latencies of stream memops on a GPU (write, wait, round trip through host memory).
 *
 * <p>Layer: an application of gdsync's {@code cuda} and {@code memop}.
 */
package dev.gdasync.apps.gpulatency;

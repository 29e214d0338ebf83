/**
 * {@code scripts/bench}: the benchmarks by name ({@code gdsync-pingpong}, {@code jmh}), with the command-line
 * conventions of every gdasync command.
 *
 * <p>Layer: an application; it calls the benchmarks' main classes and libmp's {@code cli}.
 */
package dev.gdasync.apps.bench;

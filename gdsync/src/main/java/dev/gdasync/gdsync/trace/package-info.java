/**
 * gdsync's flight-recorder events (JDK Flight Recorder, {@code jdk.jfr}): what host executors, the software NIC and
 * the mlx5 provider do, one event type per step of a send's life (docs/observability.md). Every type is named
 * {@code dev.gdasync.<Step>}, is disabled by default and records no stack trace; the project's settings file
 * ({@link dev.gdasync.gdsync.trace.TraceSettings}) enables them all.
 *
 * <p>Call sites use the flight recorder's idiom: make the event, ask {@link jdk.jfr.Event#shouldCommit()}, fill and
 * commit only then. With no recording, or with these events disabled, the JIT removes the event object (escape
 * analysis) and the check costs a branch; the allocation test ({@code EventsAllocationTest}) and the JMH benchmark
 * ({@code EventOverheadBenchmarks}) keep it so.
 *
 * <p>Layer: gdsync's base. It calls nothing of the project (events take numbers and names, never the project's
 * types), so that every package may record.
 */
package dev.gdasync.gdsync.trace;

/**
 * The host KI executor's flight-recorder events (docs/observability.md): a block's run
 * ({@link dev.gdasync.ki.trace.KiBlockEvent}) and its waits on table words
 * ({@link dev.gdasync.ki.trace.KiBlockWaitEvent}). Like gdsync's they are named {@code dev.gdasync.<Step>}, disabled
 * by default, free when disabled, and enabled by the project's settings file. GPU kernels are not recorded.
 *
 * <p>Layer: ki-kernels' base. It calls nothing of the project.
 */
package dev.gdasync.ki.trace;

/**
 * libmp's flight-recorder events (docs/observability.md): every request's state changes
 * ({@link dev.gdasync.libmp.trace.RequestStateEvent}) and a job failure reaching this rank
 * ({@link dev.gdasync.libmp.trace.MpFailureEvent}). Like gdsync's ({@code dev.gdasync.gdsync.trace}) they are named
 * {@code dev.gdasync.<Step>}, disabled by default, free when disabled, and enabled by the project's settings file.
 *
 * <p>Layer: libmp's base. It calls nothing of the project.
 */
package dev.gdasync.libmp.trace;

/**
 * {@code scripts/trace}: the ranks' flight recordings of one job ({@code rank-N.jfr}) turned into one Chrome/Perfetto
 * trace JSON, and a PNG of its end (docs/observability.md). {@link dev.gdasync.apps.trace.Trace} is the command;
 * the recordings are read with {@code jdk.jfr.consumer}, laid out as a timeline of tracks, spans, instants and flows,
 * and written with Jackson's streaming generator.
 */
package dev.gdasync.apps.trace;

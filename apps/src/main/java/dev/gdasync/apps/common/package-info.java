/**
 * What several apps share, so that it is written once: the per-rank main of a libmp application
 * ({@link dev.gdasync.apps.common.RankMain}) and the launcher's rank before the bootstrap
 * ({@link dev.gdasync.apps.common.LauncherRank}); a baseline or {@code mpj} mode run by rank 0 as a child job
 * ({@link dev.gdasync.apps.common.ChildJob}; MPJ Express's starter in {@link dev.gdasync.apps.common.MpjStarter}, its
 * niodev started without MPJ's daemons in {@link dev.gdasync.apps.common.NiodevStarter}, the device chosen by
 * {@link dev.gdasync.apps.common.MpjDevice}, the MPJ program's main in {@link dev.gdasync.apps.common.MpjProgram}) while the other ranks wait for its heartbeat
 * ({@link dev.gdasync.apps.common.RootHeartbeat}); and the benchmarks' measuring helpers
 * ({@link dev.gdasync.apps.common.Medians}, {@link dev.gdasync.apps.common.CsvFile},
 * {@link dev.gdasync.apps.common.JitActivity}).
 *
 * <p>Layer: a library of the apps; it uses libmp ({@code Mp}, its bootstrap and cli), MPJ Express
 * ({@code MpjProgram}, in the child job only) and no app package.
 */
package dev.gdasync.apps.common;

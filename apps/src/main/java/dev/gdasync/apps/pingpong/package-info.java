/**
 * LibMP's ping-pong, the main job: two ranks in the {@code host}, {@code sa}, {@code ki}, {@code mpj} and
 * {@code jucx} models side by side, on host or GPU buffers, with tables, CSV and a plot.
 *
 * <p>Layer: an application; it calls libmp's public API, the streams and executors it drives, and the references it
 * measures against (MPJ Express, raw JUCX).
 */
package dev.gdasync.apps.pingpong;

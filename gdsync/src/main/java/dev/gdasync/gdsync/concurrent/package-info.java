/**
 * How the project's threads poll, idle and run: agents, idle strategies and thread affinity.
 *
 * <ul>
 *   <li>{@link dev.gdasync.gdsync.concurrent.AgentThread}: an Agrona agent run by an {@code AgentRunner} on a
 *       named platform daemon thread, with the project's error report; every thread that polls has this shape
 *       (docs/agents.md).</li>
 *   <li>{@link dev.gdasync.gdsync.concurrent.BackoffIdler} and {@link dev.gdasync.gdsync.concurrent.BackoffPolicy}:
 *       the one idle strategy (spin, yield, bounded park), for runners between duty cycles and for waits inside
 *       them; {@link dev.gdasync.gdsync.concurrent.Wakeup} lets posters cut its parks short.</li>
 *   <li>{@link dev.gdasync.gdsync.concurrent.ThreadAffinity}: pins a thread to a CPU.</li>
 * </ul>
 *
 * <p>Layer: the lowest of gdsync. It calls nothing of the project; it may call the JDK, FFM (for
 * {@code sched_setaffinity}) and Agrona's agent classes and idle strategies ({@code org.agrona.concurrent}),
 * not Agrona's buffers or ring buffers, which need JVM flags. Every other package may call it.
 */
package dev.gdasync.gdsync.concurrent;

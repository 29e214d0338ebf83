/**
 * Communicators and non-blocking collectives over an {@link dev.gdasync.libmp.Mp}: {@link
 * dev.gdasync.libmp.coll.Collectives} runs the host progress engine of one Mp, {@link
 * dev.gdasync.libmp.coll.Communicator} names a group of its ranks (world, or split by colour and key) and posts
 * collectives on it, and {@link dev.gdasync.libmp.coll.CollRequest} is one posted collective, completed by the
 * communicator's {@code test} and {@code wait}. See {@code docs/collectives.md}.
 */
package dev.gdasync.libmp.coll;

/**
 * Communicators and non-blocking collectives over an {@link dev.gdasync.libmp.Mp}: {@link
 * dev.gdasync.libmp.coll.Collectives} runs the progress engine of one Mp (the host engine, progressed by test and
 * wait, or the offload engine, executed by the host's collective proxy in {@code coll.offload}), {@link
 * dev.gdasync.libmp.coll.Communicator} names a group of its ranks (world, or split by colour and key) and posts
 * collectives on it, and {@link dev.gdasync.libmp.coll.CollRequest} is one posted collective, completed by the
 * communicator's {@code test} and {@code wait}; {@link dev.gdasync.libmp.coll.Group} is a rank's own pattern of
 * sends and receives posted as one collective. See {@code docs/collectives.md}.
 */
package dev.gdasync.libmp.coll;

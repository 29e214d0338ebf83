/**
 * Reducing collectives on a {@link dev.gdasync.libmp.coll.Communicator}: allreduce, reduce-scatter, reduce, and
 * the data types and reduction operators they combine elements with. Built from the communicator's
 * {@code isendrecv} steps: a ring for large messages, recursive doubling for small ones, each with a fixed
 * reduction order so that floating-point results are bit-identical on every rank.
 */
package dev.gdasync.libmp.coll.reduce;

package dev.gdasync.gdsync.nic;

/**
 * Who rings prepared sends: a stream, the tables of a kernel executor, or the CPU itself. A queue pair's
 * doorbell record is a cumulative producer index, so its sends must be rung in prepare order; while some are
 * posted to one executor and not yet rung, a queue pair refuses to post later ones to another, which could
 * ring them first ({@link SendRequest#checkPost}).
 */
public interface SendExecutor {

    /** The calling CPU thread, which rings what it posts at once. */
    SendExecutor CPU = () -> "the CPU";

    /** @return what rings the sends, for messages */
    String name();
}

package dev.gdasync.libmp.coll.msccl;

/**
 * A blocking run cannot go on: a peer is in another call, a peer's buffer cannot be mapped. Thrown by a connection
 * inside a thread block's step; the interpreter turns it into the call's {@link
 * dev.gdasync.libmp.coll.CollectiveException} with every block's position.
 */
final class MscclRunException extends RuntimeException {
    MscclRunException(String message) {
        super(message, null, false, false);
    }
}

package dev.gdasync.gdsync.mlx5;

/**
 * What a queue pair is created for: the provider's request to the device.
 *
 * @param sendWqes   send requests in flight at most; the device sizes the send queue in basic blocks for them
 * @param recvWqes   receives posted at most
 * @param maxRecvSge scatter entries per receive
 * @param maxInline  inline payload bytes per send
 */
public record Mlx5QpShape(int sendWqes, int recvWqes, int maxRecvSge, int maxInline) {
    /** @throws IllegalArgumentException if a value is out of range */
    public Mlx5QpShape {
        if (sendWqes < 1 || recvWqes < 1 || maxRecvSge < 1 || maxInline < 0) {
            throw new IllegalArgumentException("a queue pair needs sendWqes, recvWqes and maxRecvSge >= 1 and maxInline >= 0, got "
                    + sendWqes + ", " + recvWqes + ", " + maxRecvSge + ", " + maxInline);
        }
    }
}

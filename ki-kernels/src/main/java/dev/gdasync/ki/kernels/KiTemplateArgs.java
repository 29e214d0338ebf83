package dev.gdasync.ki.kernels;

/**
 * The dynamic fields a kernel thread writes into a templated send before ringing it. Addresses and keys
 * are the NIC's: the local and remote addresses the memory regions were registered with (host virtual
 * addresses for host regions, on a GPU too).
 *
 * @param localAddress  the local buffer
 * @param length        bytes to send
 * @param lkey          the local region's lkey
 * @param remoteAddress the remote target (one-sided sends)
 * @param rkey          the remote region's rkey
 */
public record KiTemplateArgs(long localAddress, int length, long lkey, long remoteAddress, long rkey) {
    /** @throws IllegalArgumentException if the length is negative */
    public KiTemplateArgs {
        if (length < 0) {
            throw new IllegalArgumentException("a templated send's length must be >= 0, got " + length);
        }
    }
}

package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memop.MemoryWord;

/**
 * Where a prepared send's work request lies in its send queue, and the byte offsets of the fields a
 * kernel thread may patch before ringing it (a templated send, after GPU-initiated OpenSHMEM): the local
 * buffer's address, lkey and length, the message length, and the remote address and key. Fields are
 * little-endian; addresses and keys are 64-bit, lengths 32-bit.
 *
 * @param entry           the first word of the work request
 * @param offSgeAddress   offset of the local buffer address
 * @param offSgeLkey      offset of the local buffer lkey
 * @param offSgeLength    offset of the local buffer length
 * @param offTotalLength  offset of the message length
 * @param offRemoteAddress offset of the remote address
 * @param offRkey         offset of the rkey
 */
public record WqeTemplate(MemoryWord entry, int offSgeAddress, int offSgeLkey, int offSgeLength, int offTotalLength,
                          int offRemoteAddress, int offRkey) {
}

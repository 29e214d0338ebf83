package dev.gdasync.libmp.mpj;

import mpjbuf.Buffer;
import mpjbuf.BufferException;
import mpjbuf.NIOBuffer;
import mpjbuf.RawBuffer;
import xdev.XDevException;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * What the device reads from and writes into MPJ's {@link Buffer}s: a buffer's static section is its
 * {@link NIOBuffer}'s memory from {@link Buffer#offset()}, {@link Buffer#getSize()} bytes long (the device asks for no
 * overhead, so the offset is 0); its dynamic section (serialized objects) is a byte array.
 */
final class MpjBuffers {
    /**
     * A committed buffer's content.
     *
     * @param type         the code of its first section's type, -1 for an empty buffer
     * @param elements     the element count of its first section
     * @param memory       the buffer's memory (its {@link NIOBuffer}'s), or null for an empty buffer
     * @param offset       where the static section starts in it
     * @param length       the static section's length
     * @param dynamicBytes the dynamic section, or null
     * @param area         the buffer when it is one of the rendezvous area's, which may still have to copy the
     *                     program's arrays into {@code memory} ({@link AreaBuffer#writeOut}); else null
     */
    record Content(int type, int elements, ByteBuffer memory, int offset, int length, byte[] dynamicBytes,
                   AreaBuffer area) {
        /** @return the static section, a view of the buffer's memory (made on each call) */
        MemorySegment staticBytes() {
            if (memory == null) {
                return MemorySegment.ofArray(new byte[0]);
            }
            ByteBuffer bb = memory.duplicate();
            bb.clear();
            return MemorySegment.ofBuffer(bb).asSlice(offset, length);
        }

        /** @return the area's buffer whose remembered writes are still to be copied, or null */
        AreaBuffer unwritten() {
            return area != null && area.hasRemembered() ? area : null;
        }

        /** @return whether it carries objects (a dynamic section) */
        boolean hasObjects() {
            return dynamicBytes != null && dynamicBytes.length > 0;
        }
    }

    private MpjBuffers() {
    }

    /**
     * Commits a buffer to be sent and describes it.
     *
     * @param call the call, for messages
     * @param peer the destination, for messages
     * @param tag  the tag, for messages
     * @throws XDevException if the buffer cannot be read
     */
    static Content read(String call, int peer, int tag, Buffer buf) {
        int type = -1;
        int elements = 0;
        try {
            buf.commit();
            if (buf.getSize() > 0) {
                type = buf.getSectionHeader().getCode();
                elements = buf.getSectionSize();
            }
        } catch (BufferException e) {
            throw new XDevException(where(call, peer, tag) + ": the buffer cannot be read: " + e);
        }
        if (buf.getSize() == 0) {
            return new Content(type, elements, null, 0, 0, buf.getDynamicBuffer(), null);
        }
        RawBuffer raw = buf.getStaticBuffer();
        if (!(raw instanceof NIOBuffer nio)) {
            throw new XDevException(where(call, peer, tag) + ": a buffer whose static section is a "
                    + (raw == null ? "null" : raw.getClass().getName()) + "; this device handles MPJ's NIOBuffer");
        }
        return new Content(type, elements, nio.getBuffer(), buf.offset(), buf.getSize(), buf.getDynamicBuffer(),
                nio instanceof AreaBuffer a ? a : null);
    }

    // The call's description is built only for an error: a send builds no string.
    private static String where(String call, int peer, int tag) {
        return call + " to rank " + peer + " tag " + tag;
    }

    /**
     * @param buf    a receive's buffer
     * @param length a message's static section's length
     * @return the buffer's memory where that section goes, or null when it does not fit or is not an NIOBuffer
     */
    static MemorySegment target(Buffer buf, int length) {
        RawBuffer raw = buf.getStaticBuffer();
        if (!(raw instanceof NIOBuffer nio)) {
            return null;
        }
        int room = room(buf, raw);
        if (length > room) {
            return null;
        }
        ByteBuffer bb = nio.getBuffer().duplicate();
        bb.clear();
        return MemorySegment.ofBuffer(bb).asSlice(buf.offset(), length);
    }

    /**
     * Copies a whole small message from a receive slot into a receive's buffer, which takes its size (the lean path of
     * a blocking receive: no view of either memory is made).
     *
     * @param from   the slot's memory
     * @param at     where the message's bytes start there
     * @param length how many
     * @return whether it was copied (false: it does not fit, or the buffer is not an NIOBuffer; nothing changed)
     */
    static boolean receiveWhole(Buffer buf, ByteBuffer from, int at, int length) {
        RawBuffer raw = buf.getStaticBuffer();
        if (!(raw instanceof NIOBuffer nio) || length > room(buf, raw)) {
            return false;
        }
        ByteBuffer into = nio.getBuffer();
        if (buf.offset() + length > into.limit()) {
            return false; // a limit MPJ set: the usual way writes through a view of the buffer's capacity
        }
        into.put(buf.offset(), from, at, length);
        buf.setSize(length);
        return true;
    }

    /** @return how many bytes of a static section fit in a buffer (0 without memory) */
    private static int room(Buffer buf, RawBuffer raw) {
        return raw == null ? 0 : Math.min(buf.getCapacity(), raw.getCapacity()) - buf.offset();
    }

    /** A message written straight into a receive's buffer is complete: the buffer takes its sizes. */
    static void received(Buffer buf, Inbound m) {
        buf.setSize(m.staticLength);
        if (m.dynamicLength > 0) {
            buf.setDynamicBuffer(m.dynamicBytes);
        }
    }

    /**
     * @param what the receive, for messages
     * @return why a message cannot go into a receive's buffer (it is larger, or the buffer is not an NIOBuffer)
     */
    static String notReceivable(String what, Buffer buf, Inbound m) {
        RawBuffer raw = buf.getStaticBuffer();
        if (raw != null && !(raw instanceof NIOBuffer)) {
            return what + ": a receive buffer whose static section is a " + raw.getClass().getName()
                    + "; this device handles MPJ's NIOBuffer";
        }
        int room = room(buf, raw);
        return truncated(what, m.staticLength, m, room);
    }

    private static String truncated(String what, int length, Inbound m, int room) {
        return "message truncated (MPI_ERR_TRUNCATE): " + what + " matched a message of " + length
                + " bytes from rank " + m.source + " tag " + m.tag + ", larger than the receive buffer's " + room
                + " bytes";
    }

    /**
     * Copies a message assembled on its own into a receive's buffer.
     *
     * @param what the receive, for messages
     * @return null, or why the message could not be received (it is larger than the buffer)
     */
    static String fill(String what, Buffer buf, Inbound m) {
        RawBuffer raw = buf.getStaticBuffer();
        int room = room(buf, raw);
        if (m.staticBytes.length > room) {
            return truncated(what, m.staticBytes.length, m, room);
        }
        if (m.staticBytes.length > 0) {
            if (!(raw instanceof NIOBuffer nio)) {
                return what + ": a receive buffer whose static section is a " + raw.getClass().getName()
                        + "; this device handles MPJ's NIOBuffer";
            }
            nio.getBuffer().put(buf.offset(), m.staticBytes);
        }
        buf.setSize(m.staticBytes.length);
        if (m.dynamicBytes.length > 0) {
            buf.setDynamicBuffer(m.dynamicBytes);
        }
        return null;
    }
}

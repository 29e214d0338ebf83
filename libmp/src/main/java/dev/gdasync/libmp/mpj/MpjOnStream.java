package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.stream.Stream;
import mpi.Comm;
import mpi.Datatype;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import xdev.XDevException;

/**
 * LibMP's stream-triggered calls on MPJ's messages, for a program that runs MPJ Express over gdasync: the CPU prepares
 * a message now and a stream sends it when it gets there ({@link #isendOnStream}, LibMP's {@code mp_isend_on_stream}),
 * and a stream waits until an MPJ request completes ({@link #waitOnStream}, {@code mp_wait_on_stream}). Both travel
 * over the connections of MPJ's own messages: a stream send is received by any MPJ receive, probe or collective's
 * receive of the destination that matches its source, tag and communicator, and the receive a stream waits for is an
 * ordinary MPJ receive.
 *
 * <p>Order: a stream send takes its place among this rank's messages to the destination when it is called. Earlier
 * messages to that rank go first (the call waits until they are on the connection, as a blocking send would); later
 * CPU sends to that rank wait until the stream has rung it (the connection rings in prepare order), so MPI's
 * non-overtaking rule holds per source, tag and communicator whichever mix of stream and CPU sends a program makes.
 *
 * <p>Limits: the primitive datatypes ({@code MPI.BYTE}, {@code CHAR}, {@code SHORT}, {@code BOOLEAN}, {@code INT},
 * {@code LONG}, {@code FLOAT}, {@code DOUBLE}); messages that fit one receive slot ({@code gdasync.mpj.slot.bytes}
 * less a 40-byte header: 32 728 bytes of packed data by default); destinations on this host. Other sends are refused
 * with a precise message and change nothing.
 *
 * <p>Threads: call from the thread that makes the program's MPJ calls. A stream's waits move the device on from the
 * stream's thread, under the device's lock, so the program's thread need not call MPJ while a stream waits; the
 * program's own calls on {@link MpjGdasync#mp()} must not run while a stream waits on an MPJ request (they would drive
 * the Mp from two threads). Failures: a stream waiting for a peer's free slot or for a request fails when the job
 * fails (a rank's process gone: the stream's failure names it) or the device fails; a request that fails fails the
 * stream waiting for it with the request's error.
 */
public final class MpjOnStream {
    private MpjOnStream() {
    }

    /**
     * Sends a message rung by a stream (LibMP's {@code mp_isend_on_stream} on an MPJ message): the CPU packs it now,
     * with MPJ's packing, into a send slot of the destination and prepares its send; the stream, when it gets there,
     * waits for a free receive slot of the destination (a wait on the credit word the destination writes into this
     * rank's memory) and rings the send. The program may change its buffer once this returns.
     *
     * @param comm   the communicator ({@code MPI.COMM_WORLD}, a split, a duplicate ...)
     * @param buf    the program's array, of the datatype's Java type
     * @param offset the first element
     * @param count  how many elements
     * @param type   {@code MPI.BYTE}, {@code CHAR}, {@code SHORT}, {@code BOOLEAN}, {@code INT}, {@code LONG},
     *               {@code FLOAT} or {@code DOUBLE}
     * @param dest   the destination's rank in the communicator: another rank of this host
     * @param tag    the tag, at least 0
     * @param stream the stream that rings it
     * @return the send's request: complete once the stream rang it ({@code Wait}, {@code Test} on the CPU, or
     *         {@link #waitOnStream} on another stream)
     * @throws MPIException if an argument is bad (null, out of range, a datatype not supported, a message larger than
     *                      one slot, a closed or failed stream), the destination is this rank or on another host, or
     *                      MPJ over gdasync failed; the message says which, and nothing changed
     */
    public static Request isendOnStream(Comm comm, Object buf, int offset, int count, Datatype type, int dest, int tag,
                                        Stream stream) {
        String call = "isendOnStream";
        GdasyncDevice d = device(call);
        if (comm == null) {
            throw error(call + ": the communicator is null", null);
        }
        requireUsable(call, stream);
        PrimitiveMessage message;
        try {
            message = PrimitiveMessage.of(call, primitiveName(call, type), buf, offset, count);
        } catch (IllegalArgumentException e) {
            throw error(e.getMessage(), null);
        }
        mpjdev.Comm dc = comm.mpjdevComm;
        int size = dc == null || dc.group == null ? 0 : dc.group.ids.length;
        if (dest < 0 || dest >= size) {
            throw error(call + ": destination " + dest + " is not a rank of the communicator (ranks 0.." + (size - 1)
                    + ")", null);
        }
        if (tag < 0) {
            throw error(call + ": the tag must be at least 0, got " + tag, null);
        }
        try {
            return new Request(d.streams().send(dc.group.ids[dest], tag, dc.sendctxt, message, stream));
        } catch (XDevException e) {
            throw error(e.getMessage(), e);
        }
    }

    /**
     * Makes a stream wait until an MPJ request completes (LibMP's {@code mp_wait_on_stream} on an MPJ request): work
     * the stream runs after this point sees the request complete, and a receive's data in the program's array (MPJ
     * unpacked it before the stream moves on). The CPU does not wait; it may still {@code Wait} or {@code Test} the
     * request (once) to get its status. A receive cancelled ({@code Request.Cancel}) while a stream waits on it ends
     * the wait too: the stream moves on, and the receive's array is left as it was.
     *
     * @param request a request of an MPJ call over gdasync not yet completed by a {@code Wait} or {@code Test}
     *                ({@code Irecv}, {@code Isend}, {@link #isendOnStream} ...)
     * @param stream  the stream that waits
     * @throws MPIException if an argument is bad (null, a request of another device, already completed or cancelled,
     *                      a closed or failed stream) or MPJ over gdasync failed; the message says which, and nothing
     *                      changed
     */
    public static void waitOnStream(Request request, Stream stream) {
        String call = "waitOnStream";
        GdasyncDevice d = device(call);
        if (request == null) {
            throw error(call + ": the request is null", null);
        }
        requireUsable(call, stream);
        if (request.Is_null()) {
            throw error(call + ": the request is MPI.REQUEST_NULL, was cancelled, or was completed by a Wait or Test "
                    + "already", null);
        }
        if (!(request.req instanceof DeviceRequest r) || r.device != d) {
            throw error(call + ": the request is not one of MPJ over gdasync's point-to-point calls ("
                    + (request.req == null ? "a persistent request not started" : request.req.getClass().getName()) + ")",
                    null);
        }
        try {
            d.streams().await(r, stream);
        } catch (XDevException e) {
            throw error(e.getMessage(), e);
        }
    }

    private static GdasyncDevice device(String call) {
        GdasyncDevice d = MpjGdasync.device();
        if (d == null) {
            throw error(call + ": MPJ Express does not run over gdasync in this process: start it with "
                    + "scripts/mprun --mpj and call MPI.Init first", null);
        }
        return d;
    }

    private static void requireUsable(String call, Stream stream) {
        if (stream == null) {
            throw error(call + ": the stream is null", null);
        }
        if (stream.isClosed()) {
            throw error(call + ": stream '" + stream.name() + "' is closed", null);
        }
        Throwable f = stream.failure();
        if (f != null) {
            throw error(call + ": stream '" + stream.name() + "' has failed: " + f, f);
        }
    }

    /** @return the name of a primitive datatype; refuses the others */
    private static String primitiveName(String call, Datatype type) {
        if (type == null) {
            throw error(call + ": the datatype is null", null);
        }
        if (type == MPI.BYTE) {
            return "MPI.BYTE";
        } else if (type == MPI.CHAR) {
            return "MPI.CHAR";
        } else if (type == MPI.SHORT) {
            return "MPI.SHORT";
        } else if (type == MPI.BOOLEAN) {
            return "MPI.BOOLEAN";
        } else if (type == MPI.INT) {
            return "MPI.INT";
        } else if (type == MPI.LONG) {
            return "MPI.LONG";
        } else if (type == MPI.FLOAT) {
            return "MPI.FLOAT";
        } else if (type == MPI.DOUBLE) {
            return "MPI.DOUBLE";
        }
        String name = type == MPI.OBJECT ? "MPI.OBJECT" : type == MPI.PACKED ? "MPI.PACKED"
                : "a derived or pair datatype";
        throw error(call + ": " + name + " is not supported on a stream: the primitive types are (MPI.BYTE, CHAR, "
                + "SHORT, BOOLEAN, INT, LONG, FLOAT, DOUBLE); send the others with Isend", null);
    }

    private static MPIException error(String message, Throwable cause) {
        MPIException e = new MPIException(message);
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }
}

package dev.gdasync.gdsync.swnic.ucx;

import dev.gdasync.gdsync.ffm.Downcalls;
import dev.gdasync.gdsync.ucx.UcxLibrary;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The few UCP calls of the software NIC's message path, made straight through FFM on the worker and endpoints
 * that JUCX created ({@code getNativeId()}): active-message sends, worker progress with an FFM upcall as the
 * active-message handler, rendezvous receives, request status. JUCX makes each of these a JNI call that also
 * creates Java objects (a request per send, a data object per message) and calls back into Java; on the
 * transport's critical path that cost about as much as the message itself (docs/ucx.md). The endpoints' error
 * handler is an FFM upcall too ({@link #setErrorHandler}): JUCX's runs inside the worker's progress, which is an FFM
 * downcall here, and its JNI {@code FindClass} then looks in the boot class loader (the caller is a
 * {@code java.lang.invoke} frame), finds nothing and crashes the JVM. Everything else (context, worker, endpoints,
 * flushes and closes) stays JUCX's.
 *
 * <p>Struct layouts and constants are those of UCX 1.13's {@code ucp.h} (x86-64 and aarch64, LP64); the fields
 * used were laid out the same from UCX 1.10 on. Every handle is a native address as a {@code long}.
 */
@SuppressWarnings("restricted") // downcalls into libucp: native access by design
public final class UcpCalls {
    /** {@code UCS_OK}. */
    public static final int UCS_OK = 0;
    /** {@code UCS_INPROGRESS}. */
    public static final int UCS_INPROGRESS = 1;
    /** {@code UCS_ERR_LAST}: status pointers at or above its unsigned value are errors. */
    private static final long UCS_ERR_LAST = -100;

    /** {@code UCP_AM_FLAG_WHOLE_MSG}: a handler sees whole messages only. */
    public static final int AM_FLAG_WHOLE_MSG = 1;
    /** {@code UCP_AM_SEND_FLAG_REPLY}: the receiver gets an endpoint to answer on. */
    public static final int AM_SEND_FLAG_REPLY = 1;
    /** {@code UCP_AM_RECV_ATTR_FIELD_REPLY_EP} in {@code ucp_am_recv_param_t.recv_attr}. */
    public static final long AM_RECV_ATTR_FIELD_REPLY_EP = 1L;
    /** {@code UCP_AM_RECV_ATTR_FLAG_RNDV}: the data is a rendezvous descriptor, received by {@link #amRecvData}. */
    public static final long AM_RECV_ATTR_FLAG_RNDV = 1L << 17;

    /** {@code ucp_request_param_t}: 72 bytes in UCX 1.13; room is left for fields a newer UCX appends. */
    public static final long REQUEST_PARAM_SIZE = 128;
    private static final long OFF_OP_ATTR_MASK = 0;   // u32
    private static final long OFF_FLAGS = 4;          // u32
    /** {@code UCP_OP_ATTR_FIELD_FLAGS}. */
    private static final int OP_ATTR_FIELD_FLAGS = 1 << 4;

    /** {@code ucp_am_handler_param_t}: field_mask u64, id u32, flags u32, cb, arg. */
    private static final long HANDLER_PARAM_SIZE = 32;
    private static final long FIELD_ID = 1, FIELD_FLAGS = 2, FIELD_CB = 4, FIELD_ARG = 8;

    /** {@code ucp_am_recv_param_t}: recv_attr u64, reply_ep. */
    public static final long RECV_PARAM_SIZE = 16;
    /** Offset of {@code reply_ep} in {@code ucp_am_recv_param_t}. */
    public static final long OFF_REPLY_EP = 8;

    /**
     * The signature of {@code ucp_am_recv_callback_t}: {@code (arg, header, header_length, data, length, param)}
     * returning a status.
     */
    public static final FunctionDescriptor AM_RECV_CALLBACK = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
            JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS);

    /** {@code ucp_ep_params_t}: 96 bytes in UCX 1.13; room is left for fields a newer UCX appends. */
    private static final long EP_PARAMS_SIZE = 128;
    /** {@code UCP_EP_PARAM_FIELD_ERR_HANDLER}. */
    private static final long EP_PARAM_FIELD_ERR_HANDLER = 1L << 2;
    /** Offsets of {@code err_handler.cb} and {@code err_handler.arg} (after field_mask, address, err_mode). */
    private static final long OFF_ERR_HANDLER_CB = 24;
    private static final long OFF_ERR_HANDLER_ARG = 32;

    /** The signature of {@code ucp_err_handler_cb_t}: {@code (arg, ep, status)}. */
    public static final FunctionDescriptor ERROR_CALLBACK = FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, JAVA_INT);

    private static final MethodHandle WORKER_PROGRESS;
    private static final MethodHandle EP_MODIFY_NB;
    /** {@code ucs_status_string}, from libucs (which libucp depends on); null if the lookup does not reach it. */
    private static final MethodHandle STATUS_STRING;
    private static final MethodHandle AM_SEND_NBX;
    private static final MethodHandle AM_SEND_NBX_CRITICAL;
    private static final MethodHandle SET_AM_RECV_HANDLER;
    private static final MethodHandle AM_RECV_DATA_NBX;
    private static final MethodHandle REQUEST_CHECK_STATUS;
    private static final MethodHandle REQUEST_FREE;

    static {
        SymbolLookup ucp = SymbolLookup.libraryLookup(UcxLibrary.LIBRARY, Arena.global());
        Linker linker = Linker.nativeLinker();
        WORKER_PROGRESS = linker.downcallHandle(find(ucp, "ucp_worker_progress"),
                FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        FunctionDescriptor amSend = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_LONG, JAVA_LONG);
        AM_SEND_NBX = linker.downcallHandle(find(ucp, "ucp_am_send_nbx"), amSend);
        // A send to another worker runs no handler (only UCX's self transport delivers within the send): it needs
        // no thread-state change, about 25 ns of the 250 ns an 8-byte send took (docs/bench/ucx-small-messages.md).
        AM_SEND_NBX_CRITICAL = linker.downcallHandle(find(ucp, "ucp_am_send_nbx"), amSend, Linker.Option.critical(false));
        SET_AM_RECV_HANDLER = linker.downcallHandle(find(ucp, "ucp_worker_set_am_recv_handler"),
                FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
        AM_RECV_DATA_NBX = linker.downcallHandle(find(ucp, "ucp_am_recv_data_nbx"),
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
        // Neither calls back into Java: no thread-state change needed.
        REQUEST_CHECK_STATUS = linker.downcallHandle(find(ucp, "ucp_request_check_status"),
                FunctionDescriptor.of(JAVA_INT, JAVA_LONG), Linker.Option.critical(false));
        REQUEST_FREE = linker.downcallHandle(find(ucp, "ucp_request_free"),
                FunctionDescriptor.ofVoid(JAVA_LONG), Linker.Option.critical(false));
        EP_MODIFY_NB = linker.downcallHandle(find(ucp, "ucp_ep_modify_nb"),
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG));
        STATUS_STRING = ucp.find("ucs_status_string").map(f -> linker.downcallHandle(f,
                FunctionDescriptor.of(ADDRESS, JAVA_INT), Linker.Option.critical(false))).orElse(null);
    }

    private UcpCalls() {
    }

    private static MemorySegment find(SymbolLookup ucp, String name) {
        return ucp.find(name).orElseThrow(() -> new IllegalStateException(UcxLibrary.LIBRARY + " does not export " + name));
    }

    /**
     * Request parameters for sends: no callback, no user request (UCX allocates one when the send cannot finish
     * at once, to be checked with {@link #requestStatus} and freed with {@link #requestFree}).
     *
     * @param arena    where to allocate them
     * @param amFlags  {@code UCP_AM_SEND_FLAG_*}, or 0
     * @return the parameters
     */
    public static MemorySegment sendParams(Arena arena, int amFlags) {
        MemorySegment p = arena.allocate(REQUEST_PARAM_SIZE, 8);
        if (amFlags != 0) {
            p.set(JAVA_INT, OFF_OP_ATTR_MASK, OP_ATTR_FIELD_FLAGS);
            p.set(JAVA_INT, OFF_FLAGS, amFlags);
        }
        return p;
    }

    /** {@code ucp_worker_progress}: may run active-message handlers on this thread. @return events progressed */
    public static int progress(long worker) {
        try {
            return (int) WORKER_PROGRESS.invokeExact(worker);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ucp_am_send_nbx}.
     *
     * @return 0 when the send finished at once, a request to check otherwise, or an error status pointer
     *         ({@link #isError})
     */
    public static long amSend(long ep, int id, long header, long headerLength, long data, long length, MemorySegment params) {
        try {
            return (long) AM_SEND_NBX.invokeExact(ep, id, header, headerLength, data, length, params.address());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ucp_am_send_nbx} to an endpoint of another worker, without the thread-state change of a downcall
     * that may call back into Java: UCX delivers a message within the send only to its own worker (the self
     * transport), whose handler would then run inside this call, so never use it on an endpoint to this worker.
     *
     * @return as {@link #amSend}
     */
    public static long amSendToOtherWorker(long ep, int id, long header, long headerLength, long data, long length,
                                           MemorySegment params) {
        try {
            return (long) AM_SEND_NBX_CRITICAL.invokeExact(ep, id, header, headerLength, data, length, params.address());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ucp_am_recv_data_nbx}: receives a rendezvous message's data into {@code buffer}.
     *
     * @return as {@link #amSend}
     */
    public static long amRecvData(long worker, long descriptor, long buffer, long length, MemorySegment params) {
        try {
            return (long) AM_RECV_DATA_NBX.invokeExact(worker, descriptor, buffer, length, params.address());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ucp_worker_set_am_recv_handler} for whole messages.
     *
     * @param worker  the worker
     * @param id      the active message id
     * @param handler an upcall stub of {@link #AM_RECV_CALLBACK}
     * @param arena   for the parameters
     * @return the status
     */
    public static int setAmHandler(long worker, int id, MemorySegment handler, Arena arena) {
        MemorySegment p = arena.allocate(HANDLER_PARAM_SIZE, 8);
        p.set(JAVA_LONG, 0, FIELD_ID | FIELD_FLAGS | FIELD_CB | FIELD_ARG);
        p.set(JAVA_INT, 8, id);
        p.set(JAVA_INT, 12, AM_FLAG_WHOLE_MSG);
        p.set(ADDRESS, 16, handler);
        p.set(ADDRESS, 24, MemorySegment.NULL);
        try {
            return (int) SET_AM_RECV_HANDLER.invokeExact(worker, p.address());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ucp_ep_modify_nb} with the error handler alone: replaces the endpoint's (JUCX's) error handler. UCX
     * calls it from the worker's progress when the endpoint fails (its peer's connection reset, a timeout).
     *
     * @param ep      the endpoint
     * @param handler an upcall stub of {@link #ERROR_CALLBACK}
     * @param arg     the handler's first argument
     * @return {@link #UCS_OK}, or the error status UCX refused it with
     */
    public static int setErrorHandler(long ep, MemorySegment handler, long arg) {
        try (Arena local = Arena.ofConfined()) {
            MemorySegment p = local.allocate(EP_PARAMS_SIZE, 8);
            p.set(JAVA_LONG, 0, EP_PARAM_FIELD_ERR_HANDLER);
            p.set(ADDRESS, OFF_ERR_HANDLER_CB, handler);
            p.set(JAVA_LONG, OFF_ERR_HANDLER_ARG, arg);
            // UCX 1.13 modifies the handler at once: NULL (UCS_OK) or an error status pointer, never a request.
            long status = (long) EP_MODIFY_NB.invokeExact(ep, p.address());
            return isError(status) ? errorStatus(status) : UCS_OK;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** @return UCX's words for a status ({@code ucs_status_string}: "Connection reset by remote peer"), and its number */
    public static String describe(int status) {
        if (STATUS_STRING != null) {
            try {
                MemorySegment words = (MemorySegment) STATUS_STRING.invokeExact(status);
                if (!words.equals(MemorySegment.NULL)) {
                    return words.reinterpret(256).getString(0) + " (status " + status + ")";
                }
            } catch (Throwable t) {
                // below
            }
        }
        return "status " + status;
    }

    /** {@code ucp_request_check_status}: {@link #UCS_INPROGRESS} until the request finished. */
    public static int requestStatus(long request) {
        try {
            return (int) REQUEST_CHECK_STATUS.invokeExact(request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ucp_request_free}. */
    public static void requestFree(long request) {
        try {
            REQUEST_FREE.invokeExact(request);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** @return whether a status pointer is an error ({@code UCS_PTR_IS_ERR}) */
    public static boolean isError(long statusPointer) {
        return Long.compareUnsigned(statusPointer, UCS_ERR_LAST) >= 0;
    }

    /** @return the status an error status pointer carries */
    public static int errorStatus(long statusPointer) {
        return (int) statusPointer;
    }
}

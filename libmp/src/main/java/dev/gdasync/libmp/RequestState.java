package dev.gdasync.libmp;

/**
 * The life of an {@link MpRequest}, LibMP's {@code mp_state_t} plus a defined end.
 *
 * <pre>
 * sendPrepare/putPrepare ─► PREPARED ──post on a stream──┐
 * isend/irecv/iput/...  ─────────────────────────────────┴─► PENDING_NOWAIT ─wait on a stream─► PENDING
 *                                            completion arrives (reaped by the CPU) ─► COMPLETE
 *                                            wait / test / waitAll ─► RELEASED (slot back in the pool)
 * </pre>
 * NOWAIT puts are never waited on: they go from PENDING_NOWAIT to RELEASED on their own once the NIC
 * executed them. A request whose work request the NIC refused goes from PREPARED to RELEASED before its
 * caller ever sees it. The request makes each transition itself and refuses any other.
 */
public enum RequestState {
    /** Built (its work request is in the send queue) but not handed to an executor. */
    PREPARED,
    /** Posted; nobody waits for its completion yet. */
    PENDING_NOWAIT,
    /** Posted, and a stream (or kernel) waits for its completion. */
    PENDING,
    /** Its completion was reaped; not yet released. */
    COMPLETE,
    /** Waited for and released: the handle is dead and its slot is back in the request pool. */
    RELEASED
}

package dev.gdasync.libmp;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * How an Mp's CPU thread waits for its requests' completions ({@code Mp.wait}, {@code Mp.waitAll}): polls the peer
 * links, idles between polls with the Mp's idler (which parks through the NIC, woken by a delivering peer), and ends
 * the wait by its timeout or once the job failed; then turns a failed request into the exception the caller sees,
 * naming the job's failure when that explains it. One per Mp, on its driving thread; nothing here allocates while a
 * wait polls.
 */
final class RequestWaits {
    /** How long a wait whose request has no completion yet goes on after the job failed. */
    private static final long JOB_FAILURE_GRACE_NANOS = 2_000_000_000L;
    /** How long an error a peer's failure may explain waits for the bootstrap's news of it. */
    private static final long FAILURE_NEWS_WAIT_NANOS = 1_000_000_000L;

    private final MpContext context;
    private final PeerLink[] links;
    private final Completion completion;
    /** What the idler parks on: told which request (or requests) the wait is for. */
    private final PeerWait peerWait;
    private final BackoffIdler idler;
    private final long waitTimeoutNanos;
    private final long waitTimeoutMillis;

    /**
     * @param context     the Mp's context (its job's failure)
     * @param links       its peer links (shared, not copied)
     * @param completion  the completion the links reap into (the Mp's one)
     * @param peerWait    what its idler parks on
     * @param idler       its idler for waits on peers
     * @param waitTimeout how long a wait goes on
     */
    RequestWaits(MpContext context, PeerLink[] links, Completion completion, PeerWait peerWait, BackoffIdler idler,
                 Duration waitTimeout) {
        this.context = context;
        this.links = links;
        this.completion = completion;
        this.peerWait = peerWait;
        this.idler = idler;
        this.waitTimeoutNanos = waitTimeout.toNanos();
        this.waitTimeoutMillis = waitTimeout.toMillis();
    }

    /** Waits until a request completed (with or without an error); the link is the request's peer's. */
    void awaitComplete(PeerLink l, MpRequest r) {
        if (r.isComplete()) {
            return;
        }
        peerWait.request(r);
        try {
            awaitLoop(l, r);
        } finally {
            peerWait.clear();
        }
    }

    private void awaitLoop(PeerLink l, MpRequest r) {
        idler.reset();
        // While spinning the clock is read every 256 polls only (it costs as much as a poll), first after 256:
        // most waits end sooner. Once the idler yields or parks, it is read on every poll.
        boolean timing = false;
        long start = 0;
        long timeout = waitTimeoutNanos;
        for (int i = 1; ; i++) {
            l.progress(completion);
            if (r.isComplete()) {
                return;
            }
            idler.idle();
            if ((i & 0xff) != 0 && idler.isSpinning()) {
                continue;
            }
            long now = System.nanoTime();
            if (!timing) {
                timing = true;
                start = now;
            } else {
                checkWait(r, now, now - start > timeout);
            }
        }
    }

    /**
     * Waits until every request completed, or one of them completed with an error; the same polling and
     * timeout as {@link #awaitComplete}.
     */
    void awaitAllOrAFailure(List<MpRequest> requests) {
        peerWait.requests(requests);
        try {
            awaitAllLoop(requests);
        } finally {
            peerWait.clear();
        }
    }

    private void awaitAllLoop(List<MpRequest> requests) {
        idler.reset();
        boolean timing = false;
        long start = 0;
        long timeout = waitTimeoutNanos;
        for (int i = 1; ; i++) {
            MpRequest waiting = null;
            for (int k = 0, n = requests.size(); k < n; k++) {
                MpRequest r = requests.get(k);
                if (!r.isComplete()) {
                    links[r.peer()].progress(completion);
                }
                if (!r.isComplete()) {
                    if (waiting == null) {
                        waiting = r;
                    }
                } else if (r.status() != CompletionStatus.SUCCESS) {
                    return; // reported now, wherever it stands in the list
                }
            }
            if (waiting == null) {
                return;
            }
            idler.idle();
            if ((i & 0xff) != 0 && idler.isSpinning()) {
                continue;
            }
            long now = System.nanoTime();
            if (!timing) {
                timing = true;
                start = now;
            } else {
                checkWait(waiting, now, now - start > timeout);
            }
        }
    }

    /**
     * A wait's periodic check: fails it once the job failed (after the completions that failure flushed had a
     * chance to arrive: a request whose completion is held for a stream is still pending then, and one whose
     * completion did not come within {@link #JOB_FAILURE_GRACE_NANOS} never will), or when the timeout passed.
     */
    private void checkWait(MpRequest r, long now, boolean timedOut) {
        String failed = context.jobFailure();
        if (failed != null && r.state() == RequestState.PENDING) {
            context.noteFailureReported();
            throw new MpException(r.describe() + " did not complete: the job failed: " + failed
                    + " (its completion is held for the stream that waits on it)", null, ErrorDetail.JOB_FAILED);
        }
        if (failed != null && !r.isComplete() && now - context.jobFailedAt() > JOB_FAILURE_GRACE_NANOS) {
            context.noteFailureReported();
            throw new MpException(r.describe() + " did not complete: the job failed: " + failed, null, ErrorDetail.JOB_FAILED);
        }
        if (timedOut) {
            throw new MpException("timed out after " + waitTimeoutMillis + " ms waiting for "
                    + r.describe() + (failed != null ? ": the job failed: " + failed
                    : r.state() == RequestState.PENDING
                    ? ": its completion is held for the stream that waits on it, which has not passed that wait"
                    : ": no completion arrived (is the peer posting the matching operation?)"), null, null);
        }
    }

    /**
     * Throws the error of a request that completed with one; when the job failed, the message says how.
     *
     * @param outstanding requests of the same wait still outstanding, for the message
     */
    void throwIfFailed(MpRequest r, int outstanding) {
        if (r.status() == CompletionStatus.SUCCESS) {
            return;
        }
        context.noteFailureReported();
        String failed = awaitFailureNews(r.detail());
        String more = outstanding == 0 ? "" : " (" + outstanding + " other request(s) of the wait are still outstanding)";
        if (failed != null) {
            throw new MpException(r.describe() + " failed: " + r.status() + " (" + r.detail().text() + "): the job failed: "
                    + failed + more, r.status(), r.detail());
        }
        if (outstanding == 0) {
            r.throwIfFailed();
        }
        throw new MpException(r.describe() + " failed: " + r.status() + " (" + r.detail().text() + ")" + more,
                r.status(), r.detail());
    }

    /**
     * The job's failure, if it explains a request's error. A peer's queue pair in the error state, or a flush, is what
     * a rank sees when another survivor of a failed job aborted its queue pairs before this rank's bootstrap heard of
     * the failure: the news is on its way, and the error should name the rank that failed, not the survivor. So for
     * such errors this waits a bounded moment for it.
     *
     * @return the job's failure, or null if the job has not failed
     */
    private String awaitFailureNews(ErrorDetail detail) {
        String failed = context.jobFailure();
        if (failed != null || (detail != ErrorDetail.PEER_QP_ERROR && detail != ErrorDetail.FLUSHED
                && detail != ErrorDetail.PEER_CLOSED && detail != ErrorDetail.JOB_FAILED)) {
            return failed;
        }
        long deadline = System.nanoTime() + FAILURE_NEWS_WAIT_NANOS;
        while (failed == null && System.nanoTime() - deadline < 0) {
            // Not a wait for a peer (the one idle policy's business): a bounded pause on an error path, in steps.
            LockSupport.parkNanos(200_000);
            failed = context.jobFailure();
        }
        return failed;
    }
}

package dev.gdasync.libmp;

import dev.gdasync.gdsync.memop.WaitProgress;

/**
 * What the classes beside {@link Mp} know of it, so that none of them holds the Mp itself: its identity (a request,
 * registration or window carries its Mp's context, and another Mp's is refused), its rank, how word waits run the
 * Mp's progress, and its peer links (a window's mapped peer memory). The Mp makes one and hands it to the request
 * pool, registrations, windows, descriptor queues and KI exports; nothing below calls back into the Mp.
 */
final class MpContext {
    private final int rank;
    private final PeerLink[] links;
    private final WaitProgress wordWaitProgress;

    /**
     * @param rank             the Mp's rank
     * @param links            the Mp's peer links, filled as it connects (shared, not copied)
     * @param wordWaitProgress what a word wait built for this Mp runs between looks
     */
    MpContext(int rank, PeerLink[] links, WaitProgress wordWaitProgress) {
        this.rank = rank;
        this.links = links;
        this.wordWaitProgress = wordWaitProgress;
    }

    /** @return the Mp's rank */
    int rank() {
        return rank;
    }

    /** @return the link to a peer, null for this rank */
    PeerLink peerLink(int peer) {
        return links[peer];
    }

    /** @return what word waits built for this Mp run between looks (descriptor queues build them too) */
    WaitProgress wordWaitProgress() {
        return wordWaitProgress;
    }
}

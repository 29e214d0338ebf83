package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.coll.shm.ShmChannel;

/**
 * What moves a rank's collectives: the host engine ({@link CollEngine}, progressed by the caller's test and wait)
 * or the offload engine ({@link OffloadEngine}, executed by the host's collective proxy). Both take the same
 * {@link CollOp} schedules, so every collective and group runs on either.
 */
interface Engine {
    /** @return the Mp under the engine */
    Mp mp();

    /** @return the collectives posted and not yet finished on this rank */
    int activeCount();

    /** @throws CollectiveException if the engine can no longer run collectives */
    void requireHealthy();

    /**
     * Starts a collective whose schedule is complete.
     *
     * @param op the schedule
     */
    void start(CollOp op);

    /** Makes the active collectives progress (host) or looks at their completion (offload), without waiting. */
    void progress();

    /**
     * @param worldRank a rank of the Mp
     * @return the host it runs on, as far as the engine knows (the host engine: 0 for every rank)
     */
    default int hostOf(int worldRank) {
        return 0;
    }

    /**
     * A communicator of this rank opened its shared-memory channel: the offload engine tells its proxy, which then
     * helps fill the members' buffers.
     *
     * @param channel the channel
     * @param context the communicator's context
     */
    default void channelOpened(ShmChannel channel, int context) {
    }

    /** @return why the engine can no longer run collectives (its proxy is gone), or null */
    default String failure() {
        return null;
    }

    /** @return whether a proxy executes the collectives */
    boolean offloaded();

    /** Frees the engine; active collectives are abandoned. */
    void close();

    /** Opens the board where the message path's ranks post their calls; collective over the Mp's ranks. */
    default void openBoard() {
    }

    /** @return the board of the ranks' calls on the message path, or null (the offload engine; no message path) */
    default CallBoard board() {
        return null;
    }

    /** Gives up on an active op whose peers called another collective and will never complete it. */
    default void abandon(CollOp op, String why) {
        op.abandon(why, null);
    }
}

package dev.gdasync.libmp;

/**
 * What holds parts of requests until it is posted: a descriptor queue or a KI export. A request records
 * which one holds its send ring and which its completion wait ({@link MpRequest#stage}), so that a part
 * is in one batch at most.
 */
sealed interface Staging permits MpDescQueue, MpKiExport {

    /**
     * @param holder the queue or export that holds a part already
     * @param asker  the queue or export that was asked to take it
     * @return how the asker names the holder in its refusal
     */
    static String nameOf(Staging holder, Staging asker) {
        return switch (asker) {
            case MpDescQueue q -> holder == q ? "this queue" : "another queue or KI export";
            case MpKiExport e -> "a descriptor queue or KI export";
        };
    }
}

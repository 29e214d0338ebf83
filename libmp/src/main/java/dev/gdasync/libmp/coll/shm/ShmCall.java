package dev.gdasync.libmp.coll.shm;

/**
 * What a member says it is calling, published in its header so that every member checks that all agree before any
 * data is read: the collective, its root, its size in bytes, and the element type and operator codes of a reduction
 * (0 where the collective has none). Codes are the caller's (the communicator's enum ordinals plus one), compared
 * only for equality; {@link ShmChannel.Names} turns them back into words for messages.
 *
 * @param kind  the collective
 * @param root  the root, or -1 for a collective without one
 * @param bytes the size every member must agree on (per rank block, vector, or message; 0 for a barrier; for
 *              alltoallv the sizes are checked pair by pair instead, and this is 0)
 * @param type  the element type's code, 0 for none
 * @param op    the operator's code, 0 for none
 */
public record ShmCall(Kind kind, int root, long bytes, int type, int op) {
    /** The collectives of the shared-memory path; the ordinal is what a header stores. */
    public enum Kind {
        BARRIER, BCAST, ALLGATHER, ALLTOALL, ALLTOALLV, ALLREDUCE, REDUCE, REDUCE_SCATTER;

        private static final Kind[] ALL = values();

        static Kind of(int code) {
            return code >= 0 && code < ALL.length ? ALL[code] : null;
        }

        /** @return the name a user calls it by */
        public String callName() {
            return switch (this) {
                case BARRIER -> "barrier";
                case BCAST -> "bcast";
                case ALLGATHER -> "allgather";
                case ALLTOALL -> "alltoall";
                case ALLTOALLV -> "alltoallv";
                case ALLREDUCE -> "allreduce";
                case REDUCE -> "reduce";
                case REDUCE_SCATTER -> "reduceScatter";
            };
        }
    }

    /** @return whether another member's call is the same collective with the same arguments */
    boolean agreesWith(ShmCall other) {
        return other.kind == kind && other.root == root && other.bytes == bytes && other.type == type
                && other.op == op;
    }
}

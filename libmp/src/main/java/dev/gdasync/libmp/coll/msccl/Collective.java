package dev.gdasync.libmp.coll.msccl;

/**
 * The collectives an MSCCL-IR program can implement here, with the shape of their buffers in chunks: with
 * {@code N = nchunksperloop} and {@code n = ngpus}, the input holds {@link #inputChunks} and the output
 * {@link #outputChunks} chunks.
 */
public enum Collective {
    /** {@code allreduce}: input N, output N. */
    ALLREDUCE("allreduce"),
    /** {@code allgather}: input N / n, output N. */
    ALLGATHER("allgather"),
    /** {@code alltoall}: input N, output N. */
    ALLTOALL("alltoall"),
    /** {@code reduce_scatter}: input N, output N / n. */
    REDUCE_SCATTER("reduce_scatter");

    private final String xml;

    Collective(String xml) {
        this.xml = xml;
    }

    /** @return the name in the {@code coll} attribute */
    public String xml() {
        return xml;
    }

    /**
     * @param nchunks the program's chunks per loop
     * @param ngpus   its ranks
     * @return the chunks of the input buffer
     */
    public int inputChunks(int nchunks, int ngpus) {
        return this == ALLGATHER ? nchunks / ngpus : nchunks;
    }

    /**
     * @param nchunks the program's chunks per loop
     * @param ngpus   its ranks
     * @return the chunks of the output buffer
     */
    public int outputChunks(int nchunks, int ngpus) {
        return this == REDUCE_SCATTER ? nchunks / ngpus : nchunks;
    }

    /** @return whether the chunk counts depend on N being a multiple of the ranks */
    boolean splitsByRank() {
        return this == ALLGATHER || this == REDUCE_SCATTER;
    }

    /**
     * @param xml a {@code coll} attribute
     * @return its collective, or null if it names none supported
     */
    public static Collective ofXml(String xml) {
        for (Collective c : values()) {
            if (c.xml.equals(xml)) {
                return c;
            }
        }
        return null;
    }
}

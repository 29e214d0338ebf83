package dev.gdasync.ki.kernels;

/**
 * The application work of the exchange template (seed 003 §4.3): A packs what send entry i sends, B is
 * the interior work split into chunks, C unpacks. On the host executor any implementation runs; the
 * CUDA kernel runs {@link KiCopyWork} (copies between device-visible buffers).
 */
public interface KiExchangeWork {

    /**
     * A: fills the buffer that send entry {@code sendIndex} sends; called before that entry is rung.
     *
     * @param sendIndex the send entry
     */
    void pack(int sendIndex);

    /** @return how many interior chunks B is split into (0: none) */
    int interiorChunks();

    /**
     * B: one interior chunk.
     *
     * @param chunk 0 .. {@link #interiorChunks()} - 1
     */
    void interior(int chunk);

    /** @return how many unpack steps C has */
    int unpackCount();

    /**
     * C: one unpack step; called after every receive completed.
     *
     * @param index 0 .. {@link #unpackCount()} - 1
     */
    void unpack(int index);
}

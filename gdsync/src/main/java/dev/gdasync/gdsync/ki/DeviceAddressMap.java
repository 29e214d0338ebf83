package dev.gdasync.gdsync.ki;

import dev.gdasync.gdsync.memop.MemoryWord;

import java.lang.foreign.MemorySegment;

/**
 * How the executor of a KI table names a memory word: a host thread uses the word's address in this
 * process; a GPU uses the device pointer of the registered host memory.
 */
@FunctionalInterface
public interface DeviceAddressMap {

    /** Host executors: a word's address in this process. */
    DeviceAddressMap HOST = MemoryWord::address;

    /**
     * @param word a word the table refers to
     * @return the address its executor uses
     * @throws IllegalArgumentException if the word is not visible to that executor
     */
    long addressOf(MemoryWord word);

    /**
     * Forgets memory that is about to be freed, once no kernel uses it any more. A GPU's map unregisters the host
     * pages it registered that lie wholly inside the segment (a page shared with other memory stays registered), so
     * that memory allocated later at the same addresses is registered anew instead of being reached through the old,
     * still pinned pages. Host executors have nothing to forget.
     *
     * @param segment memory this map translated, about to be freed
     */
    default void forget(MemorySegment segment) {
    }
}

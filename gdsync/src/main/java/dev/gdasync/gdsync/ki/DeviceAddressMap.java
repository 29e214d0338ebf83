package dev.gdasync.gdsync.ki;

import dev.gdasync.gdsync.memop.MemoryWord;

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
}

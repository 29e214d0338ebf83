package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.ki.KiTable;

/** A KI template as the host executor runs it: a number of blocks, each a body run by one thread. */
interface HostKernel {

    /** @return the kernel's name, for messages ("ping-pong", "exchange", "template sends") */
    String name();

    /** @return the table it runs over */
    KiTable table();

    /** @return how many blocks the launch has */
    int blocks();

    /**
     * Runs one block. Failures of the communication are recorded in the table's status, as a kernel does;
     * an exception is a failure of the block itself (for example in the application's work).
     *
     * @param block the block index
     * @param ctx   the block thread's idle strategy and ring hook
     */
    void runBlock(int block, BlockContext ctx);
}

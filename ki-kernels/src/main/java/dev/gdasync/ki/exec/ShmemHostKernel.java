package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.shmem.ShmemDevice;
import dev.gdasync.ki.shmem.ShmemKernel;

/** A shmem kernel on the host: each block runs the body with its context, then exits its context. */
final class ShmemHostKernel implements HostKernel {
    private final KiTable table;
    private final long state;
    private final int blocks;
    private final ShmemKernel body;
    private final String name;

    ShmemHostKernel(KiTable table, long state, int blocks, ShmemKernel body) {
        this(table, state, blocks, body, "shmem kernel");
    }

    /** A kernel over shmem contexts with its own name (the MSCCL interpreter's blocks are one). */
    ShmemHostKernel(KiTable table, long state, int blocks, ShmemKernel body, String name) {
        this.table = table;
        this.state = state;
        this.blocks = blocks;
        this.body = body;
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public KiTable table() {
        return table;
    }

    @Override
    public int blocks() {
        return blocks;
    }

    @Override
    public void runBlock(int block, BlockContext ctx) {
        ShmemDevice.runBlock(table, state, block, ctx.idler, ctx.afterRing(), body);
    }
}

package dev.gdasync.ki;

import dev.gdasync.gdsync.ki.KiTable;

/** The MSCCL-IR interpreter on the host: each block runs its thread block over a shmem KI context, then exits it. */
final class MscclHostKernel implements HostKernel {
    private final KiTable table;
    private final long state;
    private final long program;
    private final int blocks;
    private final int firstTile;
    private final int endTile;

    MscclHostKernel(KiTable table, long state, long program, int blocks, int firstTile, int endTile) {
        this.table = table;
        this.state = state;
        this.program = program;
        this.blocks = blocks;
        this.firstTile = firstTile;
        this.endTile = endTile;
    }

    @Override
    public String name() {
        return "msccl interpreter";
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
        ShmemDevice device = new ShmemDevice(table, state, block, ctx);
        try {
            MscclKiBlock.run(device, state, program, block, firstTile, endTile);
        } finally {
            device.blockExit();
        }
    }
}

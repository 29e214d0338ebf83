package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.ki.kernels.KiDevice;

/** The ping-pong template on the host: {@code gds_ki_pingpong} of {@code docs/ki.md}, one block. */
final class PingPongKernel implements HostKernel {
    private final KiTable table;
    private final int count;
    private final boolean initiator;
    private final long computeNs;
    private final long timeoutNs;
    /** Where iteration i's wait end is stored (System.nanoTime()), or null. */
    private final long[] waitEnds;

    PingPongKernel(KiTable table, int count, boolean initiator, long computeNs, long timeoutNs, long[] waitEnds) {
        this.table = table;
        this.count = count;
        this.initiator = initiator;
        this.computeNs = computeNs;
        this.timeoutNs = timeoutNs;
        this.waitEnds = waitEnds;
    }

    @Override
    public String name() {
        return "ping-pong";
    }

    @Override
    public KiTable table() {
        return table;
    }

    @Override
    public int blocks() {
        return 1;
    }

    @Override
    public void runBlock(int block, BlockContext ctx) {
        for (int i = 0; i < count; i++) {
            if (initiator) {
                ctx.send(table.send(i));
            }
            KiTable.WaitEntry w = HostKernels.waitEntry(table, i);
            if (w == null) {
                return;
            }
            int rc = KiDevice.waitEntry(w, timeoutNs, ctx.idler, table);
            if (rc != KiDevice.OK) {
                table.report(rc, KiTableLayout.KIND_WAIT, i);
                return;
            }
            KiDevice.signal(w);
            if (waitEnds != null) {
                waitEnds[i] = System.nanoTime();
            }
            KiDevice.spin(computeNs);
            if (!initiator) {
                ctx.send(table.send(i));
            }
        }
    }
}

package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.ki.kernels.KiDevice;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiExchangeWork;
import dev.gdasync.ki.kernels.KiKernelLayout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The exchange template on the host: {@code gds_ki_exchange} of {@code docs/ki.md}. Roles come from an
 * atomic counter in the control block, in arrival order; the receiver passes every wait and opens the
 * barrier; pack blocks pack and ring their share in table order; unpack blocks do interior work, pass the
 * barrier and unpack; interior chunks go to whichever block asks next.
 */
final class ExchangeKernel implements HostKernel {
    private final KiTable table;
    private final KiExchange exchange;
    private final KiExchangeWork work;
    private final long timeoutNs;
    private final MemorySegment ctl;
    private final long role;
    private final long chunk;
    private final long arrived;
    private final long nextSend;
    private final AtomicInteger ended;
    private final Arena arena;

    ExchangeKernel(KiTable table, KiExchange exchange, long timeoutNs) {
        this.table = table;
        this.exchange = exchange;
        this.work = exchange.work();
        this.timeoutNs = timeoutNs;
        // The control block lives as long as the launch; the last block to end frees it.
        Arena arena = Arena.ofShared();
        this.ctl = arena.allocate(KiKernelLayout.EXCHANGE_CTL);
        this.role = ctl.address() + KiKernelLayout.offsetOf(KiKernelLayout.EXCHANGE_CTL, "role");
        this.chunk = ctl.address() + KiKernelLayout.offsetOf(KiKernelLayout.EXCHANGE_CTL, "chunk");
        this.arrived = ctl.address() + KiKernelLayout.offsetOf(KiKernelLayout.EXCHANGE_CTL, "arrived");
        this.nextSend = ctl.address() + KiKernelLayout.offsetOf(KiKernelLayout.EXCHANGE_CTL, "next_send");
        this.ended = new AtomicInteger(exchange.blocks());
        this.arena = arena;
    }

    @Override
    public String name() {
        return "exchange";
    }

    @Override
    public KiTable table() {
        return table;
    }

    @Override
    public int blocks() {
        return exchange.blocks();
    }

    @Override
    public void runBlock(int block, BlockContext ctx) {
        try {
            int r = KiDevice.fetchAdd32(role, 1);
            int n = exchange.packBlocks();
            if (r == 0) {
                receive(ctx);
                interior();
            } else if (r <= n) {
                pack(r - 1, ctx);
                interior();
            } else {
                interior();
                unpack(r - 1 - n, ctx);
            }
        } finally {
            if (ended.decrementAndGet() == 0) {
                arena.close();
            }
        }
    }

    private void receive(BlockContext ctx) {
        for (int j = 0; j < table.waitCount(); j++) {
            KiTable.WaitEntry w = HostKernels.waitEntry(table, j);
            int rc = w == null ? KiDevice.INVALID : KiDevice.waitEntry(w, timeoutNs, ctx.idler, table);
            if (rc != KiDevice.OK) {
                if (w != null) {
                    table.report(rc, KiTableLayout.KIND_WAIT, j);
                }
                KiDevice.store32(arrived, KiKernelLayout.ARRIVED_FAILED);
                return;
            }
            KiDevice.signal(w);
        }
        KiDevice.store32(arrived, KiKernelLayout.ARRIVED_OK);
    }

    private void pack(int p, BlockContext ctx) {
        int n = exchange.packBlocks();
        long bound = timeoutNs * (table.sendCount() + 1L);
        for (int i = p; i < table.sendCount(); i += n) {
            work.pack(i);
            // Rings in table order across blocks: a doorbell record is cumulative.
            if (KiDevice.waitWord(nextSend, i, WaitCondition.EQ, bound, ctx.idler, table) != KiDevice.OK) {
                table.report(KiTableLayout.STATUS_TIMEOUT, KiTableLayout.KIND_SEND, i);
                return;
            }
            ctx.send(table.send(i));
            KiDevice.store32(nextSend, i + 1);
        }
    }

    private void unpack(int u, BlockContext ctx) {
        long bound = timeoutNs * (table.waitCount() + 1L);
        if (KiDevice.waitWord(arrived, 1, WaitCondition.GEQ, bound, ctx.idler, table) != KiDevice.OK) {
            table.report(KiTableLayout.STATUS_TIMEOUT, KiTableLayout.KIND_BARRIER, 0);
            return;
        }
        if (KiDevice.load32(arrived) != KiKernelLayout.ARRIVED_OK) {
            return;
        }
        int m = exchange.unpackBlocks();
        for (int j = u; j < work.unpackCount(); j += m) {
            work.unpack(j);
        }
    }

    private void interior() {
        int chunks = work.interiorChunks();
        for (int c = KiDevice.fetchAdd32(chunk, 1); c < chunks; c = KiDevice.fetchAdd32(chunk, 1)) {
            work.interior(c);
        }
    }
}

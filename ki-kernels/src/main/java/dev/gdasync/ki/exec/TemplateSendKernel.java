package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.kernels.KiTemplateArgs;

import java.util.List;

/** Templated sends on the host: {@code gds_ki_send_templates} of {@code docs/ki.md}, one block. */
final class TemplateSendKernel implements HostKernel {
    private final KiTable table;
    private final List<KiTemplateArgs> args;

    TemplateSendKernel(KiTable table, List<KiTemplateArgs> args) {
        this.table = table;
        this.args = args;
    }

    @Override
    public String name() {
        return "template sends";
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
        for (int i = 0; i < args.size(); i++) {
            ctx.sendTemplate(table.template(i), args.get(i));
        }
    }
}

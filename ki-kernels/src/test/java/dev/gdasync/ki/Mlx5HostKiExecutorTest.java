package dev.gdasync.ki;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.gdsync.mlx5.CqWaitMode;
import dev.gdasync.gdsync.mlx5.Mlx5Nic;
import dev.gdasync.gdsync.mlx5.Mlx5WqeWriter;
import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WqeTemplate;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every host KI executor test once more over the mlx5 provider on the software mlx5 device: the kernels ring mlx5
 * WQEs with LibGDSync's two stores and wait on the CQEs' owner bit; templated WQEs are patched in the mlx5 encoding.
 */
class Mlx5HostKiExecutorTest extends HostKiExecutorTest {
    @Override
    Link newLink() {
        SwNicConfig sw = SwNicConfig.defaults().withShmBase(shm).withJobId("kimlx5");
        return new Link(() -> Mlx5Nic.open(SoftMlx5Device.open(sw), CqWaitMode.OWNER));
    }

    /**
     * A templated RDMA WRITE patched by a kernel thread holds, in its remote-address and data segments, the bytes an
     * mlx5 WQE written from scratch with the same fields holds (the WQE writer's bytes are rdma-core's, checked against
     * the C probe by Mlx5LayoutTest): big-endian address, 32-bit rkey, byte count, 32-bit lkey, address.
     */
    @Test
    void aPatchedMlx5TemplateHoldsTheBytesOfTheSameWqeWrittenWhole() {
        HostKiExecutor ea = executor("a", link.a, true);
        SendRequest t = link.a.qp.prepareSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(link.a.mr, 0, 8)
                .remote(link.b.mr.address(), link.b.mr.rkey()));
        WqeTemplate fields = t.template();
        assertEquals(WqeTemplate.Encoding.MLX5, fields.encoding());
        KiTable.Builder b = KiTable.builder(ea);
        b.addTemplate(t);
        KiTable table = b.writeTo(tableMemory(b));
        assertTrue((table.template(0).flags() & KiTableLayout.TEMPLATE_MLX5) != 0, "the entry says mlx5");
        long src = link.a.mr.address() + 4096;
        long dst = link.b.mr.address() + 12_345;
        Link.fill(link.a.mem().asSlice(4096, 777), 3);
        ea.sendTemplates(table, List.of(new KiTemplateArgs(src, 777, link.a.mr.lkey(), dst, link.b.mr.rkey()))).join(JOIN);
        List<Completion> done = Link.reap(link.a.qp.sendCq(), 1);
        assertEquals(777, done.getFirst().byteLength());
        Link.check(link.b.mem().asSlice(12_345, 777), 3, "the put");

        MemorySegment patched = fields.entry().segment().asSlice(fields.entry().offset(), 64);
        MemorySegment whole = arena.allocate(64, 64);
        new Mlx5WqeWriter(whole, 1).begin(0).raddr(dst, (int) link.b.mr.rkey()).data(777, (int) link.a.mr.lkey(), src);
        // The control segment differs (index, QP number); the remote-address and data segments must not.
        assertEquals(-1, patched.asSlice(16, 32).mismatch(whole.asSlice(16, 32)),
                "patched " + hex(patched.asSlice(16, 32)) + " vs whole " + hex(whole.asSlice(16, 32)));
    }

    private static String hex(MemorySegment s) {
        return java.util.HexFormat.of().formatHex(s.toArray(JAVA_BYTE));
    }
}

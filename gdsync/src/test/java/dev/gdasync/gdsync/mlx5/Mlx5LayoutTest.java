package dev.gdasync.gdsync.mlx5;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Java mlx5 formats against rdma-core's {@code infiniband/mlx5dv.h}: a C probe compiled with the header prints
 * every size, offset and constant the Java side declares, and builds a WQE and CQEs with the header's own helpers;
 * the Java writer must write the same bytes, and the Java reader must read the probe's CQEs.
 */
class Mlx5LayoutTest {
    private static final Path HEADER = Path.of("/usr/include/infiniband/mlx5dv.h");

    @TempDir
    static Path dir;
    private static Map<String, String> probe;
    private static String skipped;

    @BeforeAll
    static void runProbe() throws Exception {
        if (!Files.exists(HEADER)) {
            skipped = HEADER + " is missing (Debian's libibverbs-dev; scripts/test installs it as root): the mlx5 formats"
                    + " are not checked against rdma-core";
            System.out.println("Mlx5LayoutTest skipped: " + skipped);
            return;
        }
        Path exe = dir.resolve("mlx5_probe");
        Path src = Path.of(System.getProperty("basedir", "")).toAbsolutePath().resolve("src/test/c/mlx5_probe.c");
        String compile = run(List.of("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", exe.toString(), src.toString()));
        assertTrue(Files.isExecutable(exe), "gcc failed on the mlx5 probe:\n" + compile);
        probe = new HashMap<>();
        for (String line : run(List.of(exe.toString())).split("\n")) {
            int sp = line.indexOf(' ');
            if (sp > 0) {
                probe.put(line.substring(0, sp), line.substring(sp + 1).strip());
            }
        }
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
        assertEquals(0, p.exitValue(), command + " failed:\n" + new String(out, StandardCharsets.UTF_8));
        return new String(out, StandardCharsets.UTF_8);
    }

    private static long value(String name) {
        String v = probe.get(name);
        assertTrue(v != null, "the probe printed no " + name);
        return Long.parseLong(v);
    }

    private static byte[] bytes(String name) {
        String v = probe.get(name);
        assertTrue(v != null, "the probe printed no " + name);
        return HexFormat.of().parseHex(v);
    }

    private static void assertLayout(String type, StructLayout layout, long size, String... fields) {
        assertEquals(value("sizeof." + type), size, "size of " + type);
        for (String f : fields) {
            assertEquals(value(type + "." + f), layout.byteOffset(groupElement(f)), type + "." + f);
        }
    }

    @Test
    void everySizeAndOffsetIsRdmaCores() {
        assumeTrue(skipped == null, () -> skipped);
        assertLayout("mlx5_wqe_ctrl_seg", Mlx5Layouts.CTRL_SEG, Mlx5Layouts.CTRL_SEG.byteSize(),
                "opmod_idx_opcode", "qpn_ds", "signature", "dci_stream_channel_id", "fm_ce_se", "imm");
        assertLayout("mlx5_wqe_raddr_seg", Mlx5Layouts.RADDR_SEG, Mlx5Layouts.RADDR_SEG.byteSize(), "raddr", "rkey", "reserved");
        assertLayout("mlx5_wqe_atomic_seg", Mlx5Layouts.ATOMIC_SEG, Mlx5Layouts.ATOMIC_SEG.byteSize(), "swap_add", "compare");
        assertLayout("mlx5_wqe_data_seg", Mlx5Layouts.DATA_SEG, Mlx5Layouts.DATA_SEG.byteSize(), "byte_count", "lkey", "addr");
        assertLayout("mlx5_wqe_inl_data_seg", Mlx5Layouts.INLINE_SEG_HEADER, Mlx5Layouts.INLINE_SEG_HEADER.byteSize(),
                "byte_count");
        assertLayout("mlx5_cqe64", Mlx5Layouts.CQE64, Mlx5Layouts.CQE64.byteSize(), "srqn_uidx", "imm_inval_pkey", "app",
                "app_op", "app_info", "byte_cnt", "timestamp", "sop_drop_qpn", "wqe_counter", "signature", "op_own");
        assertLayout("mlx5_err_cqe", Mlx5Layouts.ERR_CQE, Mlx5Layouts.ERR_CQE.byteSize(), "srqn", "vendor_err_synd",
                "syndrome", "s_wqe_opcode_qpn", "wqe_counter", "signature", "op_own");
        assertEquals(value("sizeof.mlx5_cqe64"), Mlx5Cqe.SIZE);
        assertEquals(value("mlx5_cqe64.op_own") - 3, Mlx5Layouts.CQE_LAST_DWORD, "the last dword ends with op_own");
    }

    @Test
    void everyConstantIsRdmaCores() {
        assumeTrue(skipped == null, () -> skipped);
        Map<String, Long> java = new HashMap<>();
        java.put("MLX5_SEND_WQE_BB", (long) Mlx5Layouts.SEND_WQE_BB);
        java.put("MLX5_SEND_WQE_SHIFT", (long) Mlx5Layouts.SEND_WQE_SHIFT);
        java.put("MLX5_INLINE_SEG", (long) Mlx5Layouts.INLINE_SEG & 0xffffffffL);
        java.put("MLX5_RCV_DBR", (long) Mlx5Layouts.RCV_DBR);
        java.put("MLX5_SND_DBR", (long) Mlx5Layouts.SND_DBR);
        java.put("MLX5_INVALID_LKEY", (long) Mlx5Layouts.INVALID_LKEY);
        java.put("MLX5_OPCODE_NOP", (long) Mlx5Opcodes.NOP);
        java.put("MLX5_OPCODE_RDMA_WRITE", (long) Mlx5Opcodes.RDMA_WRITE);
        java.put("MLX5_OPCODE_RDMA_WRITE_IMM", (long) Mlx5Opcodes.RDMA_WRITE_IMM);
        java.put("MLX5_OPCODE_SEND", (long) Mlx5Opcodes.SEND);
        java.put("MLX5_OPCODE_SEND_IMM", (long) Mlx5Opcodes.SEND_IMM);
        java.put("MLX5_OPCODE_RDMA_READ", (long) Mlx5Opcodes.RDMA_READ);
        java.put("MLX5_OPCODE_ATOMIC_CS", (long) Mlx5Opcodes.ATOMIC_CS);
        java.put("MLX5_OPCODE_ATOMIC_FA", (long) Mlx5Opcodes.ATOMIC_FA);
        java.put("MLX5_WQE_CTRL_CQ_UPDATE", (long) Mlx5Opcodes.CTRL_CQ_UPDATE);
        java.put("MLX5_WQE_CTRL_SOLICITED", (long) Mlx5Opcodes.CTRL_SOLICITED);
        java.put("MLX5_WQE_CTRL_FENCE", (long) Mlx5Opcodes.CTRL_FENCE);
        java.put("MLX5_CQE_OWNER_MASK", (long) Mlx5Opcodes.CQE_OWNER_MASK);
        java.put("MLX5_CQE_REQ", (long) Mlx5Opcodes.CQE_REQ);
        java.put("MLX5_CQE_RESP_WR_IMM", (long) Mlx5Opcodes.CQE_RESP_WR_IMM);
        java.put("MLX5_CQE_RESP_SEND", (long) Mlx5Opcodes.CQE_RESP_SEND);
        java.put("MLX5_CQE_RESP_SEND_IMM", (long) Mlx5Opcodes.CQE_RESP_SEND_IMM);
        java.put("MLX5_CQE_REQ_ERR", (long) Mlx5Opcodes.CQE_REQ_ERR);
        java.put("MLX5_CQE_RESP_ERR", (long) Mlx5Opcodes.CQE_RESP_ERR);
        java.put("MLX5_CQE_INVALID", (long) Mlx5Opcodes.CQE_INVALID);
        java.put("MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR", (long) Mlx5Opcodes.SYNDROME_LOCAL_LENGTH_ERR);
        java.put("MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR", (long) Mlx5Opcodes.SYNDROME_LOCAL_QP_OP_ERR);
        java.put("MLX5_CQE_SYNDROME_LOCAL_PROT_ERR", (long) Mlx5Opcodes.SYNDROME_LOCAL_PROT_ERR);
        java.put("MLX5_CQE_SYNDROME_WR_FLUSH_ERR", (long) Mlx5Opcodes.SYNDROME_WR_FLUSH_ERR);
        java.put("MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR", (long) Mlx5Opcodes.SYNDROME_REMOTE_INVAL_REQ_ERR);
        java.put("MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR", (long) Mlx5Opcodes.SYNDROME_REMOTE_ACCESS_ERR);
        java.put("MLX5_CQE_SYNDROME_REMOTE_OP_ERR", (long) Mlx5Opcodes.SYNDROME_REMOTE_OP_ERR);
        java.put("MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR", (long) Mlx5Opcodes.SYNDROME_TRANSPORT_RETRY_EXC_ERR);
        java.put("MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR", (long) Mlx5Opcodes.SYNDROME_RNR_RETRY_EXC_ERR);
        for (Map.Entry<String, Long> e : java.entrySet()) {
            assertEquals(value(e.getKey()), (long) e.getValue(), e.getKey());
        }
    }

    @Test
    void theJavaWriterWritesTheProbesWqe() {
        assumeTrue(skipped == null, () -> skipped);
        try (Arena arena = Arena.ofConfined()) {
            // A send queue of 4 basic blocks; producer index 0x1234 lands in slot 0x1234 & 3 = 0.
            MemorySegment sq = arena.allocate(4 * 64, 64);
            Mlx5WqeWriter w = new Mlx5WqeWriter(sq, 4);
            int bbs = w.begin(0x1234).raddr(0x1122334455667788L, 0xcafef00d)
                    .data(100, 0x1000aa, 0x7f0000001000L).data(28, 0x2000bb, 0x7f0000002000L)
                    .finish(Mlx5Opcodes.RDMA_WRITE_IMM, 0x1234, 0xabcde, Mlx5Opcodes.CTRL_CQ_UPDATE | Mlx5Opcodes.CTRL_FENCE,
                            0x01020304);
            assertEquals(1, bbs);
            assertEquals(4, w.units());
            assertArrayEquals(bytes("wqe.write_imm"), sq.asSlice(w.offsetOf(0x1234), 64).toArray(JAVA_BYTE));
        }
    }

    @Test
    void theJavaReaderReadsTheProbesCqes() {
        assumeTrue(skipped == null, () -> skipped);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cq = arena.allocate(3 * 64, 64);
            MemorySegment.copy(MemorySegment.ofArray(bytes("cqe.req")), 0, cq, 0, 64);
            MemorySegment.copy(MemorySegment.ofArray(bytes("cqe.resp_send_imm")), 0, cq, 64, 64);
            MemorySegment.copy(MemorySegment.ofArray(bytes("cqe.req_err")), 0, cq, 128, 64);
            assertEquals(Mlx5Opcodes.CQE_REQ, Mlx5Cqe.opcode(cq, 0));
            assertEquals(1, Mlx5Cqe.owner(cq, 0));
            assertTrue(Mlx5Cqe.isWritten(cq, 0, 4 + 0, 4), "entry 4 of a 4-entry CQ is of the second pass: owner 1");
            assertTrue(!Mlx5Cqe.isWritten(cq, 0, 0, 4), "entry 0 has owner 0");
            assertEquals(0x1234, Mlx5Cqe.wqeCounter(cq, 0));
            assertEquals(128, Mlx5Cqe.byteCount(cq, 0));
            assertEquals(0xabcde, Mlx5Cqe.qpn(cq, 0));
            assertEquals(Mlx5Opcodes.CQE_RESP_SEND_IMM, Mlx5Cqe.opcode(cq, 64));
            assertEquals(0x01020304, Mlx5Cqe.immediate(cq, 64));
            assertEquals(64, Mlx5Cqe.byteCount(cq, 64));
            assertEquals(Mlx5Opcodes.CQE_REQ_ERR, Mlx5Cqe.opcode(cq, 128));
            assertEquals(Mlx5Opcodes.SYNDROME_REMOTE_ACCESS_ERR, Mlx5Cqe.syndrome(cq, 128));
            assertEquals(7, Mlx5Cqe.vendorSyndrome(cq, 128));
            assertEquals(0x0042, Mlx5Cqe.wqeCounter(cq, 128));
            assertEquals(dev.gdasync.gdsync.nic.CompletionStatus.REM_ACCESS_ERR, Mlx5Opcodes.status(Mlx5Cqe.syndrome(cq, 128)));

            // The Java CQE writer writes what the probe built.
            MemorySegment mine = arena.allocate(3 * 64, 64);
            Mlx5Cqe.write(mine, 0, Mlx5Opcodes.CQE_REQ, 1, 0x1234, 0xabcde, 128, 0);
            Mlx5Cqe.write(mine, 64, Mlx5Opcodes.CQE_RESP_SEND_IMM, 0, 0, 0x1234, 64, 0x01020304);
            Mlx5Cqe.writeError(mine, 128, Mlx5Opcodes.CQE_REQ_ERR, 1, 0x0042, 0xabcde, Mlx5Opcodes.SYNDROME_REMOTE_ACCESS_ERR, 7,
                    Mlx5Opcodes.RDMA_WRITE);
            assertEquals(-1, cq.mismatch(mine), "the Java CQEs differ from the probe's at byte " + cq.mismatch(mine));
        }
    }

    @Test
    void aWqeThatReachesTheEndOfTheBufferWrapsToItsStart() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sq = arena.allocate(4 * 64, 64);
            MemorySegment payload = arena.allocate(100);
            for (int i = 0; i < 100; i++) {
                payload.set(JAVA_BYTE, i, (byte) i);
            }
            Mlx5WqeWriter w = new Mlx5WqeWriter(sq, 4);
            // Producer index 3: the WQE starts in the last basic block; ctrl + raddr + 104 inline bytes = 9 units.
            int bbs = w.begin(3).raddr(0x10, 7).inline(payload, 0, 100).finish(Mlx5Opcodes.RDMA_WRITE, 3, 5, 0, 0);
            assertEquals(9, w.units());
            assertEquals(3, bbs, "9 units of 16 bytes take three 64-byte basic blocks");
            // The inline payload starts at offset 192 + 32 + 4 and wraps at 256 to 0.
            assertEquals(0, sq.get(JAVA_BYTE, 192 + 36));
            assertEquals(27, sq.get(JAVA_BYTE, 255));
            assertEquals(28, sq.get(JAVA_BYTE, 0));
            assertEquals(99, sq.get(JAVA_BYTE, 71));
            assertEquals(3 << 8 | Mlx5Opcodes.RDMA_WRITE, sq.get(Mlx5Layouts.BE32, 192), "the control segment stays intact");
        }
    }

    @Test
    void aWqeLargerThanTheQueueIsRefused() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sq = arena.allocate(2 * 64, 64);
            Mlx5WqeWriter w = new Mlx5WqeWriter(sq, 2);
            MemorySegment payload = arena.allocate(200);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> w.begin(0).inline(payload, 0, 200));
            assertTrue(e.getMessage().contains("128"), e.getMessage());
        }
    }

    @SuppressWarnings("unused")
    private static long offset(MemoryLayout l, String f) {
        return l.byteOffset(groupElement(f));
    }
}

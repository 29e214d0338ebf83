package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.mlx5.CqWaitMode;
import dev.gdasync.gdsync.mlx5.Mlx5Nic;
import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.swnic.NicPair;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a prepared send and a prepared CQ wait of the mlx5 provider become, compared with what LibGDSync emits on
 * mlx5: a send is WRITE32 of the big-endian send counter to the send doorbell record, a system barrier, and WRITE64
 * of the WQE control segment's first 8 bytes to the BlueFlame register; a CQ wait is WAIT32 on the CQE's last dword
 * with the owner-bit condition (NOR with {@code ~htonl(1)} while the owner bit must be 0, AND with {@code htonl(1)}
 * while it must be 1), then the write that releases the CQE. Translated for a CUDA stream, these are the driver's
 * batch operations, in that order.
 */
class Mlx5MemopTranslationTest {
    private static final CudaCapabilities GPU = new CudaCapabilities("GPU X", 12040, true, true, true, true, true, 0);
    private static final long FENCE = 0xFE00;

    @TempDir
    Path base;
    private NicPair p;

    @BeforeEach
    void open() {
        SwNicConfig sw = SwNicConfig.defaults().withShmBase(base).withJobId("mlx5memops");
        // Two CQEs per pass on the send side, so the test sees both owner-bit conditions.
        p = new NicPair(() -> Mlx5Nic.open(SoftMlx5Device.open(sw), CqWaitMode.OWNER), new QueuePairConfig(8, 8, 2),
                1 << 16, Access.ALL, Access.ALL);
    }

    @AfterEach
    void close() {
        p.close();
    }

    private static String hex(long v, int bytes) {
        MemorySegment s = MemorySegment.ofArray(new byte[8]);
        s.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0, v);
        return HexFormat.of().formatHex(s.asSlice(0, bytes).toArray(JAVA_BYTE));
    }

    private static List<String> briefs(MemopBatch batch) {
        return new MemopTranslator(GPU, w -> w.address(), FENCE).translate(batch).stream().map(DriverOp::brief).toList();
    }

    @Test
    void aPreparedSendIsTheDoorbellRecordABarrierAndTheControlSegmentToBlueFlame() {
        assertEquals(ByteOrder.LITTLE_ENDIAN, ByteOrder.nativeOrder(), "the expected bytes below are a little-endian host's");
        SendRequest r = p.qa.prepareSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.ma, 0, 64)
                .remote(p.mb.address(), p.mb.rkey()));
        MemopBatch batch = r.memops();
        assertEquals(2, batch.size());
        Memop.Write32 dbrec = (Memop.Write32) batch.get(0);
        Memop.Write64 blueFlame = (Memop.Write64) batch.get(1);

        // WRITE32: word MLX5_SND_DBR of the doorbell record; in memory, htonl of the new send counter (ctrl, raddr
        // and one data segment: 3 units, one basic block, so counter 1); no barrier (the WQE was written at prepare).
        assertTrue(dbrec.target().name().startsWith("send doorbell record of QP " + p.qa.number()), dbrec.target().name());
        assertEquals("00000001", hex(dbrec.value(), 4));
        assertFalse(dbrec.barrier());

        // WRITE64: the BlueFlame register; the WQE's first 8 bytes as they lie in the send queue: opmod 0, WQE index
        // 0, opcode RDMA_WRITE (0x08), then the QP number and ds 3, big-endian; a system barrier before it.
        assertTrue(blueFlame.target().name().startsWith("BlueFlame register of QP " + p.qa.number()), blueFlame.target().name());
        MemorySegment wqe = r.template().entry().segment().asSlice(r.template().entry().offset(), 8);
        assertEquals(HexFormat.of().formatHex(wqe.toArray(JAVA_BYTE)), hex(blueFlame.value(), 8));
        assertEquals("00000008" + String.format("%06x", p.qa.number()) + "03", hex(blueFlame.value(), 8));
        assertTrue(blueFlame.barrier());

        long db = dbrec.target().address();
        long bf = blueFlame.target().address();
        assertEquals(List.of("WRITE_VALUE_32 0x" + Long.toHexString(db) + " = 0x1000000 flags 0x0",
                "BARRIER flags 0x" + Integer.toHexString(MemopCodes.BARRIER_SYS),
                "WRITE_VALUE_64 0x" + Long.toHexString(bf) + " = 0x" + Long.toHexString(blueFlame.value()) + " flags 0x0"),
                briefs(batch));
    }

    @Test
    void aPreparedCqWaitTestsTheOwnerBitOfTheCqesLastDword() {
        for (int i = 0; i < 3; i++) {
            p.qb.postRecv(new RecvWorkRequest().wrId(i).sge(p.mb, i * 8L, 8));
            p.qa.postSend(new SendWorkRequest().wrId(i).sge(p.ma, 0, 8));
            WaitRequest w = p.qa.prepareWaitCq(p.qa.sendCq());
            // CQE n of a 2-entry CQ: owner bit (n / 2) & 1.
            boolean ownerOne = (i / 2 & 1) == 1;
            assertEquals(ownerOne ? WaitCondition.AND : WaitCondition.NOR, w.condition());
            assertEquals(ownerOne ? "01000000" : "feffffff", hex(Integer.reverseBytes(w.value()), 4),
                    "the operand as LibGDSync writes it: htonl(MLX5_CQE_OWNER_MASK), or its complement");
            assertTrue(w.word().name().startsWith("last dword of CQE slot " + (i % 2)), w.word().name());
            assertEquals(List.of(
                    "WAIT_VALUE_32 0x" + Long.toHexString(w.word().address()) + " = 0x" + Integer.toHexString(w.value())
                            + " flags 0x" + Integer.toHexString(w.condition().code()),
                    "BARRIER flags 0x" + Integer.toHexString(MemopCodes.BARRIER_SYS),
                    "WRITE_VALUE_32 0x" + Long.toHexString(w.releaseWord().address()) + " = 0x" + Integer.toHexString(i + 1)
                            + " flags 0x0"), briefs(w.memops()));
            // Run on the CPU, the wait passes once the CQE is there and releases it to poll().
            dev.gdasync.gdsync.descriptor.Descriptors.postOnCpu(
                    List.of(new dev.gdasync.gdsync.descriptor.Descriptor.Wait(w)),
                    dev.gdasync.gdsync.memop.WaitPolicy.defaults());
            Completion c = NicPair.awaitOne(p.qa.sendCq());
            assertEquals(i, c.wrId());
            assertTrue(c.isSuccess(), c.toString());
            assertArrayEquals(new long[] {i}, new long[] {NicPair.awaitOne(p.qb.recvCq()).wrId()});
        }
    }
}

package dev.gdasync.ki.cuda;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The kernels' parameter lists (docs/ki.md) and how arguments are checked and packed. */
class KernelArgsTest {
    private static List<String> shape(KernelAbi.Signature s) {
        return s.params().stream().map(p -> p.name() + ":" + p.type()).toList();
    }

    @Test
    void signaturesAreTheDocumentedOnes() {
        assertEquals("gds_ki_pingpong", KernelAbi.PINGPONG.function());
        assertEquals(List.of("table:POINTER", "count:U32", "initiator:U32", "compute_ns:U64", "timeout_ns:U64"),
                shape(KernelAbi.PINGPONG));
        assertEquals("gds_ki_send_templates", KernelAbi.SEND_TEMPLATES.function());
        assertEquals(List.of("table:POINTER", "args:POINTER", "count:U32"), shape(KernelAbi.SEND_TEMPLATES));
        assertEquals("gds_ki_exchange", KernelAbi.EXCHANGE.function());
        assertEquals(List.of("table:POINTER", "ctl:POINTER", "work:POINTER", "pack_blocks:U32", "unpack_blocks:U32",
                "timeout_ns:U64"), shape(KernelAbi.EXCHANGE));
        assertEquals(128, KernelAbi.EXCHANGE_BLOCK_THREADS);
        assertEquals(List.of(8, 4, 8), List.of(KernelAbi.Type.POINTER.bytes(), KernelAbi.Type.U32.bytes(),
                KernelAbi.Type.U64.bytes()));
    }

    @Test
    void valuesArePassedAsLittleEndianOfTheParameterSize() {
        KernelArgs a = KernelArgs.of(KernelAbi.PINGPONG, 0x1122_3344_5566_7788L, 0xFFFF_FFFFL, 1, 5, 0x0102L);
        assertArrayEquals(new byte[] {(byte) 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, a.bytes(0));
        assertArrayEquals(new byte[] {-1, -1, -1, -1}, a.bytes(1));
        assertArrayEquals(new byte[] {1, 0, 0, 0}, a.bytes(2));
        assertArrayEquals(new byte[] {2, 1, 0, 0, 0, 0, 0, 0}, a.bytes(4));
        assertEquals(0xFFFF_FFFFL, a.value(1));
        assertEquals("gds_ki_pingpong(table=0x1122334455667788, count=4294967295, initiator=1, compute_ns=5, "
                + "timeout_ns=258)", a.toString());
        assertNotNull(a.pack());
    }

    @Test
    void argumentsThatDoNotFitTheSignatureAreRefused() {
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                () -> KernelArgs.of(KernelAbi.SEND_TEMPLATES, 1, 2));
        assertEquals("gds_ki_send_templates takes 3 arguments [table, args, count], got 2", count.getMessage());
        IllegalArgumentException u32 = assertThrows(IllegalArgumentException.class,
                () -> KernelArgs.of(KernelAbi.SEND_TEMPLATES, 1, 2, 1L << 32));
        assertEquals("gds_ki_send_templates argument count is a uint32_t, got 4294967296", u32.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KernelArgs.of(KernelAbi.SEND_TEMPLATES, 1, 2, -1));
        IllegalArgumentException nul = assertThrows(IllegalArgumentException.class,
                () -> KernelArgs.of(KernelAbi.EXCHANGE, 1, 0, 3, 1, 1, 1));
        assertEquals("gds_ki_exchange argument ctl is a device address, got 0", nul.getMessage());
    }
}

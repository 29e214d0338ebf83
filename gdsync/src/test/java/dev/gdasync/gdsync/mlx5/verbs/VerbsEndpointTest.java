package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.nic.Endpoint;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hardware endpoint's encoding: what goes in comes out, and what is not one is refused with a reason. */
class VerbsEndpointTest {
    private static final byte[] ROCE_GID = HexFormat.of().parseHex("00000000000000000000ffffc0a80a07");

    @Test
    void aRoceEndpointSurvivesTheRoundTrip() {
        VerbsEndpoint e = new VerbsEndpoint(0xabcde, 0x123456, 0, ROCE_GID, 1, VerbsConstants.IBV_MTU_1024);
        Endpoint encoded = e.encode();
        assertEquals(VerbsEndpoint.SIZE, encoded.toBytes().length);
        VerbsEndpoint back = VerbsEndpoint.decode(Endpoint.fromHex(encoded.toHex()));
        assertEquals(e, back);
        assertEquals(0xabcde, back.qpn());
        assertEquals(0x123456, back.psn());
        assertArrayEquals(ROCE_GID, back.gid());
        assertEquals(1, back.port());
        assertEquals(VerbsConstants.IBV_MTU_1024, back.mtu());
        assertFalse(back.routesByLid());
        assertEquals(0x6d6c7835, ByteBuffer.wrap(encoded.toBytes()).getInt(), "the encoding starts with \"mlx5\"");
        assertEquals(1, encoded.toBytes()[4], "version 1");
    }

    @Test
    void anInfinibandEndpointRoutesByLid() {
        VerbsEndpoint e = new VerbsEndpoint(0xffffff, 0, 0xbeef, new byte[16], 255, VerbsConstants.IBV_MTU_4096);
        VerbsEndpoint back = VerbsEndpoint.decode(e.encode());
        assertEquals(e, back);
        assertEquals(0xbeef, back.lid());
        assertEquals(255, back.port());
        assertTrue(back.routesByLid());
    }

    @Test
    void theGidIsCopiedInAndOut() {
        byte[] gid = ROCE_GID.clone();
        VerbsEndpoint e = new VerbsEndpoint(1, 2, 0, gid, 1, 3);
        gid[15] = 0;
        e.gid()[14] = 0;
        assertArrayEquals(ROCE_GID, e.gid());
    }

    @Test
    void fieldsOutOfRangeAreRefused() {
        assertEquals("a QP number has 24 bits, got 0x1000000", assertThrows(IllegalArgumentException.class,
                () -> new VerbsEndpoint(1 << 24, 0, 0, ROCE_GID, 1, 3)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> new VerbsEndpoint(1, -1, 0, ROCE_GID, 1, 3));
        assertThrows(IllegalArgumentException.class, () -> new VerbsEndpoint(1, 0, 0x10000, ROCE_GID, 1, 3));
        assertEquals("a GID has 16 bytes, got 4", assertThrows(IllegalArgumentException.class,
                () -> new VerbsEndpoint(1, 0, 0, new byte[4], 1, 3)).getMessage());
        assertEquals("a port number is 1 to 255, got 0", assertThrows(IllegalArgumentException.class,
                () -> new VerbsEndpoint(1, 0, 0, ROCE_GID, 0, 3)).getMessage());
        assertEquals("an MTU is IBV_MTU_256 (1) to IBV_MTU_4096 (5), got 6", assertThrows(IllegalArgumentException.class,
                () -> new VerbsEndpoint(1, 0, 0, ROCE_GID, 1, 6)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> new VerbsEndpoint(1, 0, 0, ROCE_GID, 1, 0));
    }

    @Test
    void bytesThatAreNotAHardwareEndpointAreRefused() {
        byte[] good = new VerbsEndpoint(0x42, 7, 0, ROCE_GID, 1, 3).encode().toBytes();

        IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class,
                () -> VerbsEndpoint.decode(Endpoint.of(new byte[]{1, 2, 3})));
        assertTrue(foreign.getMessage().startsWith("not a hardware mlx5 endpoint"), foreign.getMessage());

        byte[] magic = good.clone();
        magic[0] = 's';
        assertTrue(assertThrows(IllegalArgumentException.class, () -> VerbsEndpoint.decode(Endpoint.of(magic)))
                .getMessage().startsWith("not a hardware mlx5 endpoint"));

        byte[] version = good.clone();
        version[4] = 2;
        assertEquals("a hardware mlx5 endpoint of version 2, this build reads version 1: the peers run different builds",
                assertThrows(IllegalArgumentException.class, () -> VerbsEndpoint.decode(Endpoint.of(version))).getMessage());

        byte[] shorter = java.util.Arrays.copyOf(good, good.length - 1);
        assertEquals("a hardware mlx5 endpoint of version 1 has 36 bytes, got 35",
                assertThrows(IllegalArgumentException.class, () -> VerbsEndpoint.decode(Endpoint.of(shorter))).getMessage());

        byte[] bigQpn = good.clone();
        bigQpn[8] = 1; // the QP number's top byte: 25 bits
        assertTrue(assertThrows(IllegalArgumentException.class, () -> VerbsEndpoint.decode(Endpoint.of(bigQpn)))
                .getMessage().startsWith("a QP number has 24 bits"));

        byte[] mtu = good.clone();
        mtu[6] = 9;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> VerbsEndpoint.decode(Endpoint.of(mtu)))
                .getMessage().startsWith("an MTU is"));

        assertThrows(NullPointerException.class, () -> VerbsEndpoint.decode(null));
    }
}

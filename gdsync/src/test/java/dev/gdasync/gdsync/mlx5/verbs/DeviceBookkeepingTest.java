package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.memory.RegionKind;
import dev.gdasync.gdsync.mlx5.Mlx5Keys;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the hardware device keeps without hardware: which objects are live (so misuse gets a precise message) and the
 * page-aligned host regions it hands out.
 */
class DeviceBookkeepingTest {

    private static LiveObjects<Mlx5Keys> registrations() {
        return new LiveObjects<>("mlx5_0", "memory registration", Mlx5Keys::handle,
                k -> "registration (lkey 0x" + Integer.toHexString(k.lkey()) + ")");
    }

    @Test
    void aLiveObjectIsFoundAndADestroyedOneIsNamedAsSuch() {
        LiveObjects<Mlx5Keys> live = registrations();
        Mlx5Keys keys = new Mlx5Keys(0x11, 0x22, 0x7000);
        live.add(keys);
        assertSame(keys, live.require(new Mlx5Keys(0x11, 0x22, 0x7000), "deregister"));
        assertEquals(1, live.size());
        live.remove(keys);
        assertEquals(0, live.size());
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> live.require(keys, "deregister"));
        assertEquals("deregister: registration (lkey 0x11) of mlx5_0 is already destroyed", twice.getMessage());
    }

    @Test
    void nullAndForeignObjectsAreRefusedWithWhatTheyAre() {
        LiveObjects<Mlx5Keys> live = registrations();
        live.add(new Mlx5Keys(0x11, 0x22, 0x7000));
        NullPointerException nil = assertThrows(NullPointerException.class, () -> live.require(null, "deregister"));
        assertEquals("deregister: the memory registration is null", nil.getMessage());
        // Same handle, other keys: forged, or another device's.
        IllegalArgumentException forged = assertThrows(IllegalArgumentException.class,
                () -> live.require(new Mlx5Keys(0x12, 0x22, 0x7000), "deregister"));
        assertEquals("deregister: registration (lkey 0x12) was not made by mlx5_0 (a foreign or forged memory registration)",
                forged.getMessage());
        assertThrows(IllegalArgumentException.class, () -> live.require(new Mlx5Keys(0x11, 0x22, 0x8000), "deregister"));
    }

    @Test
    void onlyTheLastDestroyedObjectsAreRemembered() {
        LiveObjects<Mlx5Keys> live = registrations();
        List<Mlx5Keys> all = new ArrayList<>();
        for (int i = 0; i <= LiveObjects.REMEMBERED; i++) {
            Mlx5Keys k = new Mlx5Keys(i, i, 0x1000L + i);
            all.add(k);
            live.add(k);
            live.remove(k);
        }
        // The first is forgotten: a second destroy of it reads as a foreign object, the newest as destroyed.
        assertThrows(IllegalArgumentException.class, () -> live.require(all.getFirst(), "deregister"));
        assertThrows(IllegalStateException.class, () -> live.require(all.getLast(), "deregister"));
    }

    @Test
    void aHostRegionIsWholeZeroedPagesAndClosesOnce() {
        List<PageAlignedRegion> released = new ArrayList<>();
        PageAlignedRegion r = PageAlignedRegion.allocate(7, 5000, 4096, released::add);
        assertEquals(RegionKind.HOST, r.kind());
        assertEquals(7, r.id());
        assertEquals(5000, r.length());
        assertEquals(0, r.address() % 4096, "page-aligned");
        MemorySegment s = r.segment();
        assertEquals(r.address(), s.address());
        for (long i = 0; i < s.byteSize(); i++) {
            if (s.get(JAVA_BYTE, i) != 0) {
                throw new AssertionError("byte " + i + " is not zero");
            }
        }
        s.set(JAVA_BYTE, 4999, (byte) 1);
        assertTrue(r.isOpen());
        r.close();
        r.close();
        assertFalse(r.isOpen());
        assertEquals(List.of(r), released, "the owner hears of the close once, before the memory goes");
        assertEquals("host region 7 is closed", assertThrows(IllegalStateException.class, r::segment).getMessage());
        assertThrows(IllegalArgumentException.class, () -> PageAlignedRegion.allocate(8, 0, 4096, released::add));
    }
}

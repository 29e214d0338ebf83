package dev.gdasync.gdsync.ucx;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UcxLibraryTest {
    @Test
    void versionsParseAndMatchAsUcxPromises() {
        assertEquals(new UcxVersion(1, 12, 1), UcxVersion.parse("1.12.1"));
        assertEquals(new UcxVersion(1, 19, 1), UcxVersion.parse("1.19.1-rc2"));
        assertEquals(new UcxVersion(1, 14, 0), UcxVersion.parse("1.14"));
        assertEquals("'x.y' is not a UCX version (major.minor.release)",
                assertThrows(IllegalArgumentException.class, () -> UcxVersion.parse("x.y")).getMessage());
        UcxVersion debian = new UcxVersion(1, 13, 1);
        assertTrue(debian.serves(UcxVersion.parse("1.12.1")));
        assertTrue(debian.serves(UcxVersion.parse("1.13.0")));
        assertFalse(debian.serves(UcxVersion.parse("1.18.1")), "a newer JUCX fails on an older UCX");
        assertFalse(new UcxVersion(2, 0, 0).serves(UcxVersion.parse("1.12.1")), "another major version");
    }

    @Test
    void theProbeEitherGivesAContextOrSaysWhy() {
        Optional<String> reason = UcxLibrary.unavailableReason();
        if (reason.isPresent()) {
            System.out.println("UcxLibraryTest: UCX is not usable here: " + reason.get());
            assertTrue(reason.get().contains("libucp.so.0") || reason.get().contains("JUCX"), reason.get());
            assertEquals(reason.get(), assertThrows(IllegalStateException.class, UcxLibrary::context).getMessage());
            return;
        }
        assertEquals(new UcxVersion(1, 12, 1), UcxLibrary.jucxVersion());
        assertTrue(UcxLibrary.ucxVersion().serves(UcxLibrary.jucxVersion()), UcxLibrary.ucxVersion().toString());
        assertNotNull(UcxLibrary.context());
    }
}

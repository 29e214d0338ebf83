package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.StubWork;
import dev.gdasync.ki.kernels.KiCopy;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiExchangeWork;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Every argument check of the CUDA executor, made before anything changes. */
class LaunchChecksTest {
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment words = arena.allocate(64, 8);
    private final KiTable table = RawTable.counts(arena.allocate(4096, 8), words.address(), 3, 2, 1);

    @AfterEach
    void free() {
        arena.close();
    }

    private static void message(String expected, Runnable r) {
        assertEquals(expected, assertThrows(IllegalArgumentException.class, r::run).getMessage());
    }

    @Test
    void pingPong() {
        assertDoesNotThrow(() -> LaunchChecks.pingPong(table, 2, 0, 1));
        assertDoesNotThrow(() -> LaunchChecks.pingPong(table, 0, 0, 1));
        message("ping-pong of 3 iterations needs 3 send and 3 wait entries, the table has 3 sends and 2 waits",
                () -> LaunchChecks.pingPong(table, 3, 0, 1));
        message("ping-pong count must be >= 0, got -1", () -> LaunchChecks.pingPong(table, -1, 0, 1));
        message("ping-pong compute time must be >= 0 ns, got -5", () -> LaunchChecks.pingPong(table, 1, -5, 1));
        message("ping-pong timeout must be > 0 ns, got 0", () -> LaunchChecks.pingPong(table, 1, 0, 0));
        assertThrows(NullPointerException.class, () -> LaunchChecks.pingPong(null, 1, 0, 1));
    }

    @Test
    void sendTemplates() {
        KiTemplateArgs a = new KiTemplateArgs(1, 8, 2, 3, 4);
        assertEquals(List.of(a), LaunchChecks.sendTemplates(table, List.of(a)));
        assertEquals(List.of(), LaunchChecks.sendTemplates(table, List.of()));
        message("2 template sends need 2 template entries, the table has 1",
                () -> LaunchChecks.sendTemplates(table, List.of(a, a)));
        assertThrows(NullPointerException.class, () -> LaunchChecks.sendTemplates(table, Arrays.asList(a, null)));
        assertThrows(NullPointerException.class, () -> LaunchChecks.sendTemplates(table, null));
    }

    @Test
    void exchange() {
        KiCopy c = new KiCopy(arena.allocate(8, 8), arena.allocate(8, 8));
        KiCopyWork three = new KiCopyWork(List.of(c, c, c), List.of(c), null, 0, 0);
        assertSame(three, LaunchChecks.exchange(table, new KiExchange(2, 1, three), 1000));
        KiCopyWork none = new KiCopyWork(List.of(), List.of(), c, 2, 0);
        assertSame(none, LaunchChecks.exchange(table, new KiExchange(1, 0, none), 1000));
        KiCopyWork two = new KiCopyWork(List.of(c, c), List.of(), null, 0, 0);
        message("the exchange work has 2 pack copies, the table has 3 send entries: give one pack copy per send entry, "
                + "or none", () -> LaunchChecks.exchange(table, new KiExchange(1, 0, two), 1000));
        message("exchange timeout must be > 0 ns, got -1", () -> LaunchChecks.exchange(table, new KiExchange(1, 0, none), -1));
        message("exchange timeout of " + Long.MAX_VALUE + " ns is too large: the kernel multiplies it by 4 in 64 bits",
                () -> LaunchChecks.exchange(table, new KiExchange(1, 0, none), Long.MAX_VALUE));
        KiExchangeWork custom = new StubWork();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LaunchChecks.exchange(table, new KiExchange(1, 0, custom), 1000));
        assertEquals(true, e.getMessage().startsWith("the CUDA exchange kernel runs KiCopyWork (copies between "
                + "device-visible buffers), got "), e.getMessage());
        assertEquals(true, e.getMessage().endsWith(": custom work needs a user kernel built with device.cuh, or the host "
                + "KI executor"), e.getMessage());
    }

    @Test
    void checksLeaveTheTableAlone() {
        table.report(11, 2, 1);
        assertThrows(IllegalArgumentException.class, () -> LaunchChecks.pingPong(table, 9, 0, 1));
        assertEquals(new KiTable.Status(11, 2, 1), table.status());
    }
}

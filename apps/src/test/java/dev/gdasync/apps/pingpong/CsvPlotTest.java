package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** CsvPlot reads the curves of a CSV by its header's column names, and names what is wrong with one. */
class CsvPlotTest {

    @Test
    void readsOneCurvePerLineInFileOrder() {
        List<LatencyPlot.Point> p = CsvPlot.points(List.of("mode,bytes,iters,oneway_us", "host,8,10,0.25",
                "mpj-gdasync,8,10,2.5", "host,64,10,0.3", ""), "mode", "oneway_us");
        assertEquals(List.of(new LatencyPlot.Point("host", 8, 0.25), new LatencyPlot.Point("mpj-gdasync", 8, 2.5),
                new LatencyPlot.Point("host", 64, 0.3)), p);
    }

    @Test
    void aMissingColumnOrABadRowIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CsvPlot.points(List.of("mode,bytes", "host,8"), "mode", "oneway_us"));
        assertEquals("no column 'oneway_us' in [mode, bytes]", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> CsvPlot.points(List.of("mode,bytes,oneway_us", "host,eight,1"), "mode", "oneway_us"));
        assertEquals("row 2: For input string: \"eight\"", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> CsvPlot.points(List.of("mode,bytes,oneway_us", "host,8"), "mode", "oneway_us"));
        assertEquals("row 2 has 2 columns, the header 3", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CsvPlot.points(List.of(), "mode", "x"));
    }
}

package dev.gdasync.apps.pingpong;

import java.nio.file.Path;
import java.util.List;

/** The message rate's plot: millions of messages per second against message size, one line per mode, log scales. */
final class RatePlot {
    private RatePlot() {
    }

    /**
     * @param rows the rows
     * @param file where; its folder must exist
     */
    static void write(List<RateResult> rows, Path file) {
        LatencyPlot.write(rows.stream().map(r -> new LatencyPlot.Point(r.mode(), r.bytes(), r.messagesPerSecond() / 1e6)).toList(),
                "msgrate: messages per second vs message size (window " + rows.getFirst().window() + ")",
                "million messages per second (log scale)", file);
    }
}

package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.pingpong.PingPongOptions.Mode;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PingPongOptionsTest {

    private static String error(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> PingPongOptions.parse(args)).getMessage();
    }

    @Test
    void defaults() {
        PingPongOptions o = PingPongOptions.parse();
        assertEquals(List.of(Mode.HOST, Mode.SA), o.modes());
        assertEquals(List.of(8, 4096, 1048576), o.sizes());
        assertEquals(10_000, o.iters());
        assertEquals(0, o.computeMicros());
        assertFalse(o.validate());
        assertNull(o.csv());
        assertNull(o.plot());
        assertEquals(5, o.reps());
        assertEquals(3.0, o.warmupSeconds());
        assertTrue(o.pin());
    }

    @Test
    void everyOption() {
        PingPongOptions o = PingPongOptions.parse("--mode", "mpj,host,sa,ki", "--sizes", "1,4K,2m, 100", "--iters", "7",
                "--compute-us", "2.5", "--validate", "--csv", "out/pp.csv", "--plot", "out/pp.PNG", "--reps", "3",
                "--warmup", "0", "--pin", "no");
        assertEquals(List.of(Mode.MPJ, Mode.HOST, Mode.SA, Mode.KI), o.modes());
        assertEquals(List.of(1, 4096, 2 << 20, 100), o.sizes());
        assertEquals(7, o.iters());
        assertEquals(2.5, o.computeMicros());
        assertTrue(o.validate());
        assertEquals(Path.of("out/pp.csv"), o.csv());
        assertEquals(Path.of("out/pp.PNG"), o.plot());
        assertEquals(3, o.reps());
        assertEquals(0, o.warmupSeconds());
        assertFalse(o.pin());
        assertEquals(2 << 20, o.maxBytes());
    }

    @Test
    void jucxIsAMode() {
        assertEquals(List.of(Mode.HOST, Mode.JUCX), PingPongOptions.parse("--mode", "host,jucx").modes());
        assertEquals(List.of(Mode.JUCX), PingPongOptions.parse("--mode", " jucx ").modes());
        assertEquals("jucx", Mode.JUCX.label());
        assertEquals("--mode: jucx is given twice", error("--mode", "jucx,sa,jucx"));
        assertEquals("--mode: unknown mode 'ucx' (host, sa, ki, mpj or jucx)", error("--mode", "ucx"));
        assertTrue(PingPongOptions.USAGE.contains("jucx (raw JUCX"), PingPongOptions.USAGE);
    }

    @Test
    void helpIsNotAnError() {
        assertNull(PingPongOptions.parse("--iters", "5", "--help"));
        assertNull(PingPongOptions.parse("-h"));
    }

    @Test
    void measurementArgsRoundTrip() {
        PingPongOptions o = PingPongOptions.parse("--mode", "mpj", "--sizes", "8,64", "--iters", "9", "--reps", "2",
                "--warmup", "0.5", "--compute-us", "1", "--validate");
        PingPongOptions back = PingPongOptions.parse(o.measurementArgs().toArray(String[]::new));
        assertEquals(o.sizes(), back.sizes());
        assertEquals(o.iters(), back.iters());
        assertEquals(o.reps(), back.reps());
        assertEquals(o.warmupSeconds(), back.warmupSeconds());
        assertEquals(o.computeMicros(), back.computeMicros());
        assertTrue(back.validate());
    }

    @Test
    void badModes() {
        assertEquals("--mode: unknown mode 'gpu' (host, sa, ki, mpj or jucx)", error("--mode", "host,gpu"));
        assertEquals("--mode: sa is given twice", error("--mode", "sa,host,sa"));
        assertEquals("--mode: empty mode in 'host,' (a comma-separated list of host, sa, ki, mpj, jucx)", error("--mode", "host,"));
        assertEquals("--mode: unknown mode 'HOST' (host, sa, ki, mpj or jucx)", error("--mode", "HOST"));
    }

    @Test
    void badSizes() {
        assertEquals("--sizes: 0 is out of range: sizes are 1..67108864 bytes", error("--sizes", "8,0"));
        assertEquals("--sizes: -8 is out of range: sizes are 1..67108864 bytes", error("--sizes", "-8"));
        assertEquals("--sizes: 65M is out of range: sizes are 1..67108864 bytes", error("--sizes", "65M"));
        assertEquals("--sizes: 'eight' is not a byte count (a positive integer, optionally with K or M)", error("--sizes", "eight"));
        assertEquals("--sizes: '1.5K' is not a byte count (a positive integer, optionally with K or M)", error("--sizes", "1.5K"));
        assertEquals("--sizes: empty size in '8,,16' (a comma-separated list of byte counts)", error("--sizes", "8,,16"));
        assertEquals("--sizes: 4096 is given twice", error("--sizes", "4096,4K"));
    }

    @Test
    void badNumbers() {
        assertEquals("--iters must be a positive integer, got 'ten'", error("--iters", "ten"));
        assertEquals("--iters must be in 1..1000000000, got 0", error("--iters", "0"));
        assertEquals("--iters must be in 1..1000000000, got -3", error("--iters", "-3"));
        assertEquals("--reps must be in 1..1000, got 0", error("--reps", "0"));
        assertEquals("--compute-us must be in 0..1000000, got -1", error("--compute-us", "-1"));
        assertEquals("--compute-us must be in 0..1000000, got NaN", error("--compute-us", "NaN"));
        assertEquals("--compute-us must be a number, got '5us'", error("--compute-us", "5us"));
        assertEquals("--warmup must be in 0..3600, got 7200", error("--warmup", "7200"));
    }

    @Test
    void badFilesAndFlags() {
        assertEquals("--plot writes a PNG: the file name must end with .png, got 'latency.svg'", error("--plot", "latency.svg"));
        assertEquals("--csv needs a file name", error("--csv", " "));
        assertEquals("--pin takes yes or no, got 'maybe'", error("--pin", "maybe"));
        assertEquals("--iters needs a value", error("--sizes", "8", "--iters"));
        assertEquals("unknown option --size", error("--size", "8"));
        assertEquals("unexpected argument '8': options start with --", error("8"));
    }

    @Test
    void buffers() {
        assertEquals(PingPongOptions.Buffers.HOST, PingPongOptions.parse().buffers());
        PingPongOptions o = PingPongOptions.parse("--buffers", "gpu", "--mode", "sa,host", "--compute-us", "10");
        assertEquals(PingPongOptions.Buffers.GPU, o.buffers());
        assertEquals(List.of(PingPongOptions.Mode.SA, PingPongOptions.Mode.HOST), o.modes());
        assertEquals(PingPongOptions.Buffers.GPU, PingPongOptions.parse("--buffers", "gpu").buffers());
        assertEquals("--buffers takes host or gpu, got 'device'", error("--buffers", "device"));
        assertEquals("--buffers gpu runs the host and sa modes only, not ki (ki, mpj and jucx use host buffers)",
                error("--buffers", "gpu", "--mode", "host,ki"));
        assertEquals("--buffers gpu runs the host and sa modes only, not mpj (ki, mpj and jucx use host buffers)",
                error("--mode", "mpj", "--buffers", "gpu"));
        assertEquals("--buffers gpu runs the host and sa modes only, not jucx (ki, mpj and jucx use host buffers)",
                error("--mode", "host,jucx", "--buffers", "gpu"));
    }
}

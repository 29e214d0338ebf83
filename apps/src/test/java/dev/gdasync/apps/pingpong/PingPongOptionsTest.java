package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.pingpong.PingPongOptions.Mode;
import dev.gdasync.libmp.cli.CommandLines;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
                "--compute-us", "2.5", "--validate", "--csv", "pp.csv", "--plot", "pp.PNG", "--reps", "3",
                "--warmup", "0", "--pin", "no");
        assertEquals(List.of(Mode.MPJ, Mode.HOST, Mode.SA, Mode.KI), o.modes());
        assertEquals(List.of(1, 4096, 2 << 20, 100), o.sizes());
        assertEquals(7, o.iters());
        assertEquals(2.5, o.computeMicros());
        assertTrue(o.validate());
        assertEquals(Path.of("pp.csv"), o.csv());
        assertEquals(Path.of("pp.PNG"), o.plot());
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
        assertEquals("invalid value for option '--mode': jucx is given twice", error("--mode", "jucx,sa,jucx"));
        assertEquals("invalid value for option '--mode': unknown mode 'uct' (host, sa, ki, mpj, mpj-niodev, jucx, floor, ompi or ucx)", error("--mode", "uct"));
        String usage = CommandLines.usage(new PingPongCommand().commandLine());
        assertTrue(usage.contains("jucx (raw JUCX"), usage);
    }

    @Test
    void theCPeersAreModesAndBringTheFloor() {
        assertEquals(List.of(Mode.FLOOR, Mode.HOST, Mode.SA, Mode.OMPI, Mode.UCX),
                PingPongOptions.parse("--mode", "host,sa,ompi,ucx").modes());
        assertEquals(List.of(Mode.HOST, Mode.FLOOR), PingPongOptions.parse("--mode", "host,floor").modes(), "given: kept in place");
        assertEquals(List.of(Mode.HOST, Mode.SA), PingPongOptions.parse("--mode", "host,sa").modes(), "no C peer, no floor");
        assertEquals("--buffers gpu runs the host and sa modes only, not ompi (ki, mpj, mpj-niodev, jucx and the C peers use host buffers)",
                error("--mode", "host,ompi", "--buffers", "gpu"));
        String usage = CommandLines.usage(new PingPongCommand().commandLine());
        assertTrue(usage.contains("floor, ompi, ucx"), usage);
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
        String m = "invalid value for option '--mode': ";
        assertEquals(m + "unknown mode 'gpu' (host, sa, ki, mpj, mpj-niodev, jucx, floor, ompi or ucx)", error("--mode", "host,gpu"));
        assertEquals(m + "sa is given twice", error("--mode", "sa,host,sa"));
        assertEquals(m + "an empty mode in 'host,' (a comma-separated list of host, sa, ki, mpj, mpj-niodev, jucx, floor, ompi, ucx)", error("--mode", "host,"));
        assertEquals(m + "unknown mode 'HOST' (host, sa, ki, mpj, mpj-niodev, jucx, floor, ompi or ucx)", error("--mode", "HOST"));
        assertEquals(List.of(Mode.HOST, Mode.SA), PingPongOptions.parse("--mode", "host", "--mode", "sa").modes(), "lists add up");
        assertEquals("--mode: host is given twice", error("--mode", "host,sa", "--mode", "host"));
        assertEquals("--sizes: 8 is given twice", error("--sizes", "8", "--sizes", "16,8"));
    }

    @Test
    void badSizes() {
        String s = "invalid value for option '--sizes': ";
        assertEquals(s + "0 is out of range: sizes are 1..67108864 bytes", error("--sizes", "8,0"));
        assertEquals(s + "-8 is out of range: sizes are 1..67108864 bytes", error("--sizes", "-8"));
        assertEquals(s + "65M is out of range: sizes are 1..67108864 bytes", error("--sizes", "65M"));
        assertEquals(s + "'eight' is not a byte count (a positive integer, optionally with K or M)", error("--sizes", "eight"));
        assertEquals(s + "'1.5K' is not a byte count (a positive integer, optionally with K or M)", error("--sizes", "1.5K"));
        assertEquals(s + "an empty size in '8,,16' (a comma-separated list of byte counts)", error("--sizes", "8,,16"));
        assertEquals(s + "4096 is given twice", error("--sizes", "4096,4K"));
    }

    @Test
    void badNumbers() {
        assertEquals("invalid value for option '--iters': 'ten' is not a whole number from 1 to 1000000000", error("--iters", "ten"));
        assertEquals("invalid value for option '--iters': 0 is not from 1 to 1000000000", error("--iters", "0"));
        assertEquals("invalid value for option '--iters': -3 is not from 1 to 1000000000", error("--iters", "-3"));
        assertEquals("invalid value for option '--reps': 0 is not from 1 to 1000", error("--reps", "0"));
        assertEquals("invalid value for option '--compute-us': -1 is not from 0 to 1000000", error("--compute-us", "-1"));
        assertEquals("invalid value for option '--compute-us': NaN is not from 0 to 1000000", error("--compute-us", "NaN"));
        assertEquals("invalid value for option '--compute-us': '5us' is not a number from 0 to 1000000", error("--compute-us", "5us"));
        assertEquals("invalid value for option '--warmup': 7200 is not from 0 to 3600", error("--warmup", "7200"));
    }

    @Test
    void badFilesAndFlags() {
        assertEquals("invalid value for option '--plot': the plot is a PNG: the file name must end with .png, not 'latency.svg'",
                error("--plot", "latency.svg"));
        assertEquals("invalid value for option '--csv': an empty file name", error("--csv", " "));
        assertEquals("invalid value for option '--pin': 'maybe' is not yes or no", error("--pin", "maybe"));
        assertEquals("missing required parameter for option '--iters' (N)", error("--sizes", "8", "--iters"));
        assertEquals("unknown options: '--size', '8'; did you mean --sizes?", error("--size", "8"));
        assertEquals("unknown option: '--bogus'", error("--sizes", "8", "--bogus"), "an unknown last option is unknown, not missing a value");
        assertEquals("unmatched argument at index 0: '8'", error("8"));
    }

    @Test
    void outputFilesAreCheckedWhenTheLineIsReadAndNoFolderIsMade(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("no-such-folder");
        assertEquals("invalid value for option '--csv': cannot write '" + missing.resolve("x.csv") + "': the folder " + missing
                + " does not exist", error("--csv", missing.resolve("x.csv").toString()));
        assertEquals("invalid value for option '--plot': cannot write '" + missing.resolve("x.png") + "': the folder " + missing
                + " does not exist", error("--plot", missing.resolve("x.png").toString()));
        assertFalse(Files.exists(missing), "no folder is made");
        assertEquals("invalid value for option '--csv': '" + dir + "' is a folder, not a file", error("--csv", dir.toString()));
        Path file = Files.createFile(dir.resolve("a-file"));
        assertEquals("invalid value for option '--csv': cannot write '" + file.resolve("x.csv") + "': " + file + " is not a folder",
                error("--csv", file.resolve("x.csv").toString()));
        Path readOnly = Files.createDirectory(dir.resolve("read-only"));
        Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("r-x------"));
        try {
            // root writes anywhere; the check is the same as the write's.
            if (!Files.isWritable(readOnly)) {
                assertEquals("invalid value for option '--csv': cannot write '" + readOnly.resolve("x.csv") + "': the folder "
                        + readOnly + " is not writable", error("--csv", readOnly.resolve("x.csv").toString()));
            }
        } finally {
            Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("rwx------"));
        }
        assertEquals(dir.resolve("ok.csv"), PingPongOptions.parse("--csv", dir.resolve("ok.csv").toString()).csv());
    }

    @Test
    void theSummaryNamesOnlyTheModesThatRan() {
        assertEquals("pingpong, 2 ranks: host and sa over the software NIC", Report.header(PingPongOptions.parse()));
        assertEquals("pingpong, 2 ranks: mpj on MPJ Express's multicore device", Report.header(PingPongOptions.parse("--mode", "mpj")));
        assertEquals("pingpong, 2 ranks: ki over the software NIC, mpj on MPJ Express's multicore device",
                Report.header(PingPongOptions.parse("--mode", "ki,mpj")));
        assertEquals("pingpong, 2 ranks: sa with GPU buffers over the software NIC (a compute kernel before each send;"
                + " sa: a CUDA stream rings and waits)", Report.header(PingPongOptions.parse("--mode", "sa", "--buffers", "gpu")));
    }

    @Test
    void buffers() {
        assertEquals(PingPongOptions.Buffers.HOST, PingPongOptions.parse().buffers());
        PingPongOptions o = PingPongOptions.parse("--buffers", "gpu", "--mode", "sa,host", "--compute-us", "10");
        assertEquals(PingPongOptions.Buffers.GPU, o.buffers());
        assertEquals(List.of(PingPongOptions.Mode.SA, PingPongOptions.Mode.HOST), o.modes());
        assertEquals(PingPongOptions.Buffers.GPU, PingPongOptions.parse("--buffers", "gpu").buffers());
        assertEquals("invalid value for option '--buffers': 'device' is not host or gpu", error("--buffers", "device"));
        assertEquals("--buffers gpu runs the host and sa modes only, not ki (ki, mpj, mpj-niodev, jucx and the C peers use host buffers)",
                error("--buffers", "gpu", "--mode", "host,ki"));
        assertEquals("--buffers gpu runs the host and sa modes only, not mpj (ki, mpj, mpj-niodev, jucx and the C peers use host buffers)",
                error("--mode", "mpj", "--buffers", "gpu"));
        assertEquals("--buffers gpu runs the host and sa modes only, not jucx (ki, mpj, mpj-niodev, jucx and the C peers use host buffers)",
                error("--mode", "host,jucx", "--buffers", "gpu"));
    }

    @Test
    void nicProvidersAreMeasuredSideBySide() {
        assertEquals(List.of(), PingPongOptions.parse().nics(), "none given: the default provider");
        PingPongOptions o = PingPongOptions.parse("--nic", "swnic,MLX5", "--mode", "host,sa,ki");
        assertEquals(List.of("swnic", "mlx5"), o.nics());
        assertEquals("pingpong, 2 ranks: host, sa and ki over the software NIC and the mlx5 provider (mlx5 queues),"
                + " side by side (rows mode/provider)", Report.header(o));
        assertEquals("pingpong, 2 ranks: host and sa over the mlx5 provider (mlx5 queues)",
                Report.header(PingPongOptions.parse("--nic", "mlx5")));
        assertTrue(error("--nic", "verbs").contains("no NIC provider named 'verbs': the providers here are [swnic, mlx5]"),
                error("--nic", "verbs"));
        assertTrue(error("--nic", "mlx5,mlx5").contains("mlx5 is given twice"), error("--nic", "mlx5,mlx5"));
        assertEquals("--buffers gpu measures one NIC provider at a time, not swnic,mlx5",
                error("--nic", "swnic,mlx5", "--buffers", "gpu"));
    }
}

package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.MpjDevice;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MpjModeTest {
    @Test
    void aResultLineCarriesTheDistributionAndTheSpread() {
        Result r = new Result("mpj", 8, 10000, 20.5, new Latencies(50000, 18.0, 20.25, 31.5, 80.0, 900.0),
                new RunSpread(5, 19.75, 22.0, 11.0));
        String line = MpjMode.format(r);
        assertEquals("MPJ-PINGPONG-RESULT 8 10000 20.500000 50000 18.000000 20.250000 31.500000 80.000000 900.000000 5"
                + " 19.750000 22.000000 11.0000", line);
        assertEquals(r, MpjMode.parse(line));
    }

    @Test
    void mpjNiodevRunsTheSameProgramOnNiodevAndLabelsItsRows() {
        PingPongOptions o = PingPongOptions.parse("--mode", "host,mpj,mpj-niodev");
        assertEquals(List.of(PingPongOptions.Mode.HOST, PingPongOptions.Mode.MPJ, PingPongOptions.Mode.MPJ_NIODEV), o.modes());
        assertEquals("mpj-niodev", PingPongOptions.Mode.MPJ_NIODEV.label());
        assertEquals(MpjDevice.MULTICORE, MpjMode.device(PingPongOptions.Mode.MPJ));
        assertEquals(MpjDevice.NIODEV, MpjMode.device(PingPongOptions.Mode.MPJ_NIODEV));
        assertThrows(IllegalArgumentException.class, () -> MpjMode.device(PingPongOptions.Mode.HOST));
        assertEquals(new Result("mpj-niodev", 8, 100, 30.5), MpjMode.parse("MPJ-PINGPONG-RESULT 8 100 30.5", "mpj-niodev"));
        assertTrue(PingPongOptions.Mode.MPJ_NIODEV.isMpj() && PingPongOptions.Mode.MPJ.isMpj());
        assertFalse(PingPongOptions.Mode.JUCX.isMpj());
    }

    @Test
    void theOlderFourFieldLineStillReads() {
        Result r = MpjMode.parse("MPJ-PINGPONG-RESULT 4096 100 19.738");
        assertEquals(new Result("mpj", 4096, 100, 19.738), r);
        assertFalse(r.latencies().isKnown());
        assertThrows(IllegalArgumentException.class, () -> MpjMode.parse("MPJ-PINGPONG-RESULT 8 1"));
    }
}

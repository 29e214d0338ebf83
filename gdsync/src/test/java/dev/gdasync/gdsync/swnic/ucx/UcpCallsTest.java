package dev.gdasync.gdsync.swnic.ucx;

import dev.gdasync.gdsync.ucx.UcxLibrary;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link UcpCalls#describe}: UCX's own words for a status, which the endpoints' error handler reports. */
class UcpCallsTest {
    @Test
    void aStatusIsDescribedInUcxsWordsWithItsNumber() {
        Optional<String> noUcx = UcxLibrary.unavailableReason();
        noUcx.ifPresent(r -> System.out.println("UcpCallsTest skipped: UCX is not usable here: " + r));
        Assumptions.assumeTrue(noUcx.isEmpty(), noUcx.orElse(""));
        assertEquals("Success (status 0)", UcpCalls.describe(UcpCalls.UCS_OK));
        assertEquals("Connection reset by remote peer (status -25)", UcpCalls.describe(-25));
    }
}

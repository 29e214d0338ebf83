package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.ucx.UcxLibrary;
import org.junit.jupiter.api.BeforeAll;

import java.util.Optional;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The failure semantics of {@link QueuePairFailureTest}, between two NICs that reach each other over UCX. */
class UcxQueuePairFailureTest extends QueuePairFailureTest {
    @BeforeAll
    static void requireUcx() {
        Optional<String> reason = UcxLibrary.unavailableReason();
        reason.ifPresent(r -> System.out.println("SKIPPED (UCX): " + r));
        assumeTrue(reason.isEmpty(), reason.orElse(""));
    }

    @Override
    SwNicConfig config() {
        return super.config().withTransport(Transport.UCX);
    }
}

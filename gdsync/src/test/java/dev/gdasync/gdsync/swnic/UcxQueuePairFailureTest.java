package dev.gdasync.gdsync.swnic;

import org.junit.jupiter.api.BeforeAll;

/** The failure semantics of {@link QueuePairFailureTest}, between two NICs that reach each other over UCX. */
class UcxQueuePairFailureTest extends QueuePairFailureTest {
    @BeforeAll
    static void requireUcx() {
        NicPair.assumeUcx();
    }

    @Override
    protected SwNicConfig config() {
        return super.config().withTransport(Transport.UCX);
    }
}

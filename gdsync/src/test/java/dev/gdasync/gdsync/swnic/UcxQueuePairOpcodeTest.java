package dev.gdasync.gdsync.swnic;

import org.junit.jupiter.api.BeforeAll;

/** Every opcode of {@link QueuePairOpcodeTest}, between two NICs that reach each other over UCX. */
class UcxQueuePairOpcodeTest extends QueuePairOpcodeTest {
    @BeforeAll
    static void requireUcx() {
        NicPair.assumeUcx();
    }

    @Override
    SwNicConfig config() {
        return super.config().withTransport(Transport.UCX);
    }
}

package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.NicPair;
import dev.gdasync.gdsync.swnic.QueuePairOpcodeTest;
import dev.gdasync.gdsync.swnic.SwNicConfig;

/**
 * Every opcode of the software NIC's opcode suite, between two mlx5 NICs on the software mlx5 device: mlx5 WQEs,
 * LibGDSync's doorbell stores and 64-byte CQEs, executed by the device's engine over shared memory.
 */
class Mlx5QueuePairOpcodeTest extends QueuePairOpcodeTest {
    @Override
    protected NicPair newPair() {
        SwNicConfig sw = SwNicConfig.defaults().withShmBase(base).withJobId("mlx5unit");
        return new NicPair(() -> Mlx5Nic.open(SoftMlx5Device.open(sw), CqWaitMode.OWNER), QueuePairConfig.DEFAULT, REGION,
                Access.ALL, Access.ALL);
    }
}

package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.NicPair;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.gdsync.swnic.TrafficCountersTest;

/**
 * The counters suite on the mlx5 provider over the software mlx5 device: counts taken where the CPU reaps CQEs,
 * doorbells and RNR retries from the device.
 */
class Mlx5TrafficCountersTest extends TrafficCountersTest {
    @Override
    protected NicPair newPair() {
        SwNicConfig sw = SwNicConfig.defaults().withShmBase(base).withJobId("mlx5unit");
        return new NicPair(() -> Mlx5Nic.open(SoftMlx5Device.open(sw), CqWaitMode.OWNER), QueuePairConfig.DEFAULT, 1 << 16,
                Access.ALL, Access.ALL);
    }
}

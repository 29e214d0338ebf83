package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.NicPair;
import dev.gdasync.gdsync.swnic.QueuePairFailureTest;
import dev.gdasync.gdsync.swnic.SwNicConfig;

/**
 * The software NIC's failure suite on the mlx5 provider over the software mlx5 device: forged keys, out-of-bounds and
 * missing-access requests fail with the right status and detail (carried in the error CQE's syndrome and vendor
 * syndrome) and touch nothing; errors flush what follows; a peer that closes fails outstanding work.
 */
class Mlx5QueuePairFailureTest extends QueuePairFailureTest {
    @Override
    protected NicPair pair(SwNicConfig config, int accessA, int accessB) {
        return new NicPair(() -> Mlx5Nic.open(SoftMlx5Device.open(config), CqWaitMode.OWNER), QueuePairConfig.DEFAULT, REGION,
                accessA, accessB);
    }
}

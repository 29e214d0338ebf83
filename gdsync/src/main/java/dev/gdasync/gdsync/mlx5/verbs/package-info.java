/**
 * The hardware mlx5 device: a ConnectX NIC through rdma-core, bound with FFM.
 *
 * <p>{@link dev.gdasync.gdsync.mlx5.verbs.HardwareMlx5Device} implements the provider's device seam
 * ({@link dev.gdasync.gdsync.mlx5.Mlx5Device}) with verbs ({@code libibverbs.so.1}: device, protection domain,
 * registrations, completion queues, RC queue pairs and their state transitions) and mlx5 direct verbs
 * ({@code libmlx5.so.1}: {@code mlx5dv_init_obj}, which says where libmlx5 put a queue's buffer, doorbell record and
 * BlueFlame register). The libraries are looked up on first use; a machine without rdma-core, or without an RDMA
 * device, gets an exception that names what is missing. The structures and constants are written out by hand from
 * rdma-core 44's headers and checked against them by a C probe the tests compile.
 *
 * <p>Layer: inside the mlx5 provider; calls {@code mlx5}, {@code memory}, {@code memop}, {@code nic} and {@code ffm}.
 * Only the provider in {@code dev.gdasync.gdsync.mlx5} calls it; the package is not exported. See
 * {@code docs/mlx5-hardware.md}.
 */
package dev.gdasync.gdsync.mlx5.verbs;

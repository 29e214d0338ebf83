/**
 * The mlx5 provider: ConnectX's queue formats in Java and the provider that drives them.
 *
 * <p>The formats: send WQEs ({@link dev.gdasync.gdsync.mlx5.Mlx5WqeWriter}), 64-byte CQEs
 * ({@link dev.gdasync.gdsync.mlx5.Mlx5Cqe}), their layouts and constants, each checked against rdma-core's
 * {@code infiniband/mlx5dv.h} by a C probe the tests compile. The device seam
 * ({@link dev.gdasync.gdsync.mlx5.Mlx5Device}) says where the queues live: on a ConnectX NIC through verbs, or on
 * the software mlx5 device in shared memory. A prepared send rings as LibGDSync rings it on mlx5: the big-endian
 * send counter to the doorbell record, a system barrier, the control segment's first 8 bytes to the BlueFlame
 * register; a prepared CQ wait waits on the CQE's last dword.
 */
package dev.gdasync.gdsync.mlx5;

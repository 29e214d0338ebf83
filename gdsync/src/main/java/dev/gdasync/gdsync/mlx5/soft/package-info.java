/**
 * The software mlx5 device: mlx5 queues in shared memory and an engine that plays the ConnectX NIC, parsing the WQEs
 * and receives the mlx5 provider writes, executing them through the software NIC's transports and access checks, and
 * writing 64-byte CQEs with the owner bit of their pass. It lets the mlx5 formats and LibGDSync's mlx5 memops run on
 * any machine.
 */
package dev.gdasync.gdsync.mlx5.soft;

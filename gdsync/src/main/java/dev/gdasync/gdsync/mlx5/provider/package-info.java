/**
 * The mlx5 provider's entry point: its settings ({@link dev.gdasync.gdsync.mlx5.provider.Mlx5Config}) and the
 * {@link dev.gdasync.gdsync.nic.NicProvider} that picks the device (a ConnectX NIC, or the software mlx5 device) and
 * opens the mlx5 NIC on it.
 */
package dev.gdasync.gdsync.mlx5.provider;

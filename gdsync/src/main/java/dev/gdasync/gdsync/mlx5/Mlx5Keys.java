package dev.gdasync.gdsync.mlx5;

/**
 * The keys of one mlx5 memory registration: 32 bits each, as an mlx5 WQE carries them.
 *
 * @param lkey   the key local work requests name the memory by
 * @param rkey   the key peers name it by
 * @param handle the device's own handle (a native {@code ibv_mr*}, or the software device's registration)
 */
public record Mlx5Keys(int lkey, int rkey, long handle) {
}

package dev.gdasync.ki.kernels;

import java.util.Objects;

/**
 * The shape of one exchange launch: {@code 1 + packBlocks + unpackBlocks} blocks, and their work.
 *
 * @param packBlocks   N: blocks that pack and ring the sends (pack block p takes send entries p, p+N, ...)
 * @param unpackBlocks M: blocks that pass the barrier after the receiver and unpack
 * @param work         the pack, interior and unpack work
 */
public record KiExchange(int packBlocks, int unpackBlocks, KiExchangeWork work) {
    /** @throws IllegalArgumentException if a count is out of range */
    public KiExchange {
        Objects.requireNonNull(work, "work");
        if (packBlocks < 1 || unpackBlocks < 0 || packBlocks > 4096 || unpackBlocks > 4096) {
            throw new IllegalArgumentException("an exchange needs 1..4096 pack blocks and 0..4096 unpack blocks, got "
                    + packBlocks + " and " + unpackBlocks);
        }
    }

    /** @return every block of the launch: the receiver, the pack blocks and the unpack blocks */
    public int blocks() {
        return 1 + packBlocks + unpackBlocks;
    }
}

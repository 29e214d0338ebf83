package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.ki.KiTable;

import java.lang.foreign.MemorySegment;

/**
 * One prepared launch of the MSCCL-IR interpreter's KI form: run {@link #blocks} blocks, block b interpreting this
 * rank's thread block b of {@link #program} over context b of the shmem KI state, for tiles
 * {@code [firstTile, endTile)}; on the host KI executor that is
 * {@code executor.msccl(table(), state(), program(), blocks(), firstTile(), endTile())}, then {@code join}.
 *
 * @param table     the KI table of the prepared slots (templated puts and their completion waits)
 * @param state     the shmem KI state the blocks share ({@code gds_shmem_state})
 * @param program   the program's kernel table for this rank ({@link MscclDeviceTable#encodeRank})
 * @param blocks    the thread blocks of this rank's {@code <gpu>}
 * @param firstTile the first tile of the run this launch covers
 * @param endTile   one past the last
 */
public record MscclKiLaunch(KiTable table, MemorySegment state, MemorySegment program, int blocks, int firstTile,
                            int endTile) {
}

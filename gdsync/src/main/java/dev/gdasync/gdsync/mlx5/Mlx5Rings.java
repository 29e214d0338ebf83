package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.memop.Doorbell;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;

import java.nio.ByteOrder;

/**
 * LibGDSync's translation of a prepared mlx5 send into memory operations, which any executor runs unchanged (a host
 * stream, a CUDA stream's batch, a KI table's send entry): a 32-bit store of the new send counter, big-endian, to the
 * send doorbell record (no barrier: the WQE was written by the CPU when the send was prepared), then a 64-bit store of
 * the WQE control segment's first 8 bytes to the BlueFlame register, after a system-wide barrier so the NIC that
 * reads the doorbell record on the BlueFlame store sees it.
 */
public final class Mlx5Rings {
    private Mlx5Rings() {
    }

    /**
     * @param sendDbrec   the send doorbell record ({@code dbrec[MLX5_SND_DBR]})
     * @param sendCounter the send counter after the WQE, in basic blocks
     * @param blueFlame   the BlueFlame register
     * @param ctrl        the control segment's first 8 bytes, as they lie in memory (read as a native long)
     * @param doorbell    what a host executor calls after the BlueFlame store, or null
     * @return the two stores
     */
    public static MemopBatch send(MemoryWord sendDbrec, int sendCounter, MemoryWord blueFlame, long ctrl, Doorbell doorbell) {
        return MemopBatch.of(
                new Memop.Write32(sendDbrec, doorbellRecordValue(sendCounter), false),
                new Memop.Write64(blueFlame, ctrl, true, doorbell));
    }

    /**
     * @param sendCounter the send counter, in basic blocks
     * @return the 32-bit value whose bytes in memory are the counter's low 16 bits, big-endian ({@code htonl})
     */
    public static int doorbellRecordValue(int sendCounter) {
        int v = sendCounter & 0xffff;
        return ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? Integer.reverseBytes(v) : v;
    }
}

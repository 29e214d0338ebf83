package dev.gdasync.ki.cuda;

import dev.gdasync.ki.kernels.KiCopy;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiKernelLayout;
import dev.gdasync.ki.kernels.KiTemplateArgs;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * Writes what the KI kernels read besides the table, in the {@link KiKernelLayout} formats: the exchange
 * control block, the exchange work with its copy arrays, and template arguments.
 *
 * <p>Exchange work is laid out as one block: {@code gds_ki_exchange_work}, then the pack copies, the
 * unpack copies and the interior copy ({@code gds_ki_copy} each); the work's {@code pack}, {@code unpack}
 * and {@code interior} fields hold the device addresses of those arrays, or 0 when empty.
 */
final class WorkWriter {
    private static final long WORK = KiKernelLayout.EXCHANGE_WORK.byteSize();
    private static final long COPY = KiKernelLayout.COPY.byteSize();
    private static final long ARGS = KiKernelLayout.TEMPLATE_ARGS.byteSize();

    private static final VarHandle W_PACK = KiKernelLayout.field(KiKernelLayout.EXCHANGE_WORK, "pack");
    private static final VarHandle W_UNPACK = KiKernelLayout.field(KiKernelLayout.EXCHANGE_WORK, "unpack");
    private static final VarHandle W_INTERIOR = KiKernelLayout.field(KiKernelLayout.EXCHANGE_WORK, "interior");
    private static final VarHandle W_UNPACK_COUNT = KiKernelLayout.field(KiKernelLayout.EXCHANGE_WORK, "unpack_count");
    private static final VarHandle W_INTERIOR_CHUNKS = KiKernelLayout.field(KiKernelLayout.EXCHANGE_WORK, "interior_chunks");
    private static final VarHandle W_INTERIOR_NS = KiKernelLayout.field(KiKernelLayout.EXCHANGE_WORK, "interior_ns");
    private static final VarHandle C_SRC = KiKernelLayout.field(KiKernelLayout.COPY, "src");
    private static final VarHandle C_DST = KiKernelLayout.field(KiKernelLayout.COPY, "dst");
    private static final VarHandle C_BYTES = KiKernelLayout.field(KiKernelLayout.COPY, "bytes");
    private static final VarHandle A_LADDR = KiKernelLayout.field(KiKernelLayout.TEMPLATE_ARGS, "laddr");
    private static final VarHandle A_LKEY = KiKernelLayout.field(KiKernelLayout.TEMPLATE_ARGS, "lkey");
    private static final VarHandle A_RADDR = KiKernelLayout.field(KiKernelLayout.TEMPLATE_ARGS, "raddr");
    private static final VarHandle A_RKEY = KiKernelLayout.field(KiKernelLayout.TEMPLATE_ARGS, "rkey");
    private static final VarHandle A_LENGTH = KiKernelLayout.field(KiKernelLayout.TEMPLATE_ARGS, "length");

    /** How the executor names a buffer: the device address of a segment's first byte. */
    @FunctionalInterface
    interface Addresses {
        /**
         * @param segment native memory
         * @return the device address of its first byte
         */
        long deviceAddressOf(MemorySegment segment);
    }

    private WorkWriter() {
    }

    /**
     * @param work exchange work
     * @return the bytes {@link #writeCopyWork} writes for it
     */
    static long copyWorkBytes(KiCopyWork work) {
        return WORK + COPY * copies(work);
    }

    private static int copies(KiCopyWork work) {
        return work.packCopies().size() + work.unpackCopies().size() + (work.interiorCopy() != null ? 1 : 0);
    }

    /**
     * Writes exchange work at the start of {@code dest}. Every buffer is translated before anything is
     * written, so a buffer the device cannot see leaves {@code dest} untouched.
     *
     * @param work       the work
     * @param dest       at least {@link #copyWorkBytes} bytes, 8-byte aligned
     * @param destDevice the device address of {@code dest}
     * @param addresses  how buffers are named on the device
     * @throws IllegalArgumentException if {@code dest} is too small
     */
    static void writeCopyWork(KiCopyWork work, MemorySegment dest, long destDevice, Addresses addresses) {
        long size = copyWorkBytes(work);
        if (dest.byteSize() < size) {
            throw new IllegalArgumentException("the exchange work needs " + size + " bytes, got " + dest.byteSize());
        }
        List<KiCopy> pack = work.packCopies();
        List<KiCopy> unpack = work.unpackCopies();
        KiCopy interior = work.interiorCopy();
        long[][] resolved = new long[copies(work)][];
        int n = 0;
        for (KiCopy c : pack) {
            resolved[n++] = resolve(c, addresses);
        }
        for (KiCopy c : unpack) {
            resolved[n++] = resolve(c, addresses);
        }
        if (interior != null) {
            resolved[n] = resolve(interior, addresses);
        }
        MemorySegment out = dest.asSlice(0, size);
        out.fill((byte) 0);
        long packAt = WORK;
        long unpackAt = packAt + COPY * pack.size();
        long interiorAt = unpackAt + COPY * unpack.size();
        W_PACK.set(out, 0L, pack.isEmpty() ? 0L : destDevice + packAt);
        W_UNPACK.set(out, 0L, unpack.isEmpty() ? 0L : destDevice + unpackAt);
        W_INTERIOR.set(out, 0L, interior == null ? 0L : destDevice + interiorAt);
        W_UNPACK_COUNT.set(out, 0L, unpack.size());
        W_INTERIOR_CHUNKS.set(out, 0L, work.interiorChunks());
        W_INTERIOR_NS.set(out, 0L, work.interiorNs());
        for (int i = 0; i < resolved.length; i++) {
            long at = WORK + COPY * i;
            C_SRC.set(out, at, resolved[i][0]);
            C_DST.set(out, at, resolved[i][1]);
            C_BYTES.set(out, at, resolved[i][2]);
        }
    }

    private static long[] resolve(KiCopy c, Addresses addresses) {
        return new long[] {addresses.deviceAddressOf(c.from()), addresses.deviceAddressOf(c.to()), c.bytes()};
    }

    /**
     * @param count argument sets
     * @return the bytes {@link #writeTemplateArgs} writes for them
     */
    static long templateArgsBytes(int count) {
        return ARGS * count;
    }

    /**
     * Writes template arguments as an array of {@code gds_ki_template_args} (NIC addresses and keys, as
     * given: the kernel writes them into work requests the NIC reads).
     *
     * @param args the arguments
     * @param dest at least {@link #templateArgsBytes} bytes, 8-byte aligned
     */
    static void writeTemplateArgs(List<KiTemplateArgs> args, MemorySegment dest) {
        long size = templateArgsBytes(args.size());
        if (dest.byteSize() < size) {
            throw new IllegalArgumentException(args.size() + " template arguments need " + size + " bytes, got "
                    + dest.byteSize());
        }
        MemorySegment out = dest.asSlice(0, size);
        out.fill((byte) 0);
        for (int i = 0; i < args.size(); i++) {
            KiTemplateArgs a = args.get(i);
            long at = ARGS * i;
            A_LADDR.set(out, at, a.localAddress());
            A_LKEY.set(out, at, a.lkey());
            A_RADDR.set(out, at, a.remoteAddress());
            A_RKEY.set(out, at, a.rkey());
            A_LENGTH.set(out, at, a.length());
        }
    }

    /**
     * Zeroes an exchange control block: the state the exchange kernel starts from.
     *
     * @param dest at least {@code KiKernelLayout.EXCHANGE_CTL.byteSize()} bytes
     */
    static void zeroCtl(MemorySegment dest) {
        dest.asSlice(0, KiKernelLayout.EXCHANGE_CTL.byteSize()).fill((byte) 0);
    }
}

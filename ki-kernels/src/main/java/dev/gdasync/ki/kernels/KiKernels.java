package dev.gdasync.ki.kernels;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

/**
 * The KI kernels packaged in this jar ({@code ki_templates.cu}, see {@code docs/ki.md}): PTX for
 * {@code compute_80} pinned to PTX ISA 8.0, and cubins for {@code sm_80} and {@code sm_90}, built with the
 * module by {@code src/main/cuda/build-kernels.sh}. A build on a machine without nvcc packages none:
 * {@link #available()} is then false and the accessors throw {@link IllegalStateException}.
 *
 * <p>The CUDA sources travel in the jar too, under {@link #CUDA_SOURCE_DIRECTORY}: the device API headers
 * ({@code device.cuh}, {@code shmem.cuh}) for users' own kernels, and the kernels' source.
 */
public final class KiKernels {
    /** {@code gds_ki_pingpong(table, count, initiator, compute_ns, timeout_ns)}: grid 1, block 1. */
    public static final String PINGPONG = "gds_ki_pingpong";
    /** {@code gds_ki_send_templates(table, args, count)}: grid 1, block 1. */
    public static final String SEND_TEMPLATES = "gds_ki_send_templates";
    /**
     * {@code gds_ki_exchange(table, ctl, work, pack_blocks, unpack_blocks, timeout_ns)}: grid
     * {@code 1 + pack_blocks + unpack_blocks}, launched cooperatively.
     */
    public static final String EXCHANGE = "gds_ki_exchange";

    /** {@code gds_compute_spin(ns)}: grid 1, block 1; busy waits {@code ns} nanoseconds (emulated compute). */
    public static final String COMPUTE_SPIN = "gds_compute_spin";

    /**
     * {@code gds_msccl_interpreter(header, tbs, steps, arena, spin_limit)}: grid = the table's thread blocks,
     * launched cooperatively; the MSCCL-IR interpreter over a table written by libmp's {@code MscclDeviceTable}
     * (docs/msccl.md).
     */
    public static final String MSCCL_INTERPRETER = "gds_msccl_interpreter";

    /**
     * {@code gds_shmem_ordering(state, data, flags, acks, bytes, rounds, role, use_signal, peer, mismatches)}: any
     * grid, block b thread 0 runs shmem context b (shmem.cuh); the KI-model ordering check of docs/shmem.md.
     */
    public static final String SHMEM_ORDERING = "gds_shmem_ordering";
    /** {@code gds_shmem_fetch_add(state, counter, count, pe, olds)}: any grid, count fetch-adds per block. */
    public static final String SHMEM_FETCH_ADD = "gds_shmem_fetch_add";
    /** {@code gds_shmem_ops(state, op, dest, src, bytes, word, count, pe)}: grid 1; every device call, by op code. */
    public static final String SHMEM_OPS = "gds_shmem_ops";

    /** The class-path folder of the built kernels. */
    public static final String KERNEL_DIRECTORY = "dev/gdasync/ki/kernels/";
    /** The class-path folder of the CUDA sources: {@code device.cuh} and {@code ki_templates.cu}. */
    public static final String CUDA_SOURCE_DIRECTORY = "dev/gdasync/ki/cuda/";

    private static final String PTX = KERNEL_DIRECTORY + "ki_templates.ptx";
    private static final String PROPERTIES = KERNEL_DIRECTORY + "kernels.properties";

    private KiKernels() {
    }

    /** @return whether this build of ki-kernels packaged the CUDA kernels (it was built with nvcc) */
    public static boolean available() {
        return KiKernels.class.getClassLoader().getResource(PTX) != null;
    }

    /** @return the kernels' PTX (ISA 8.0, {@code compute_80}), which a driver JITs for any later GPU */
    public static String ptx() {
        return new String(require(PTX), StandardCharsets.US_ASCII);
    }

    /**
     * The cubin for a GPU of a compute capability: {@code sm_90} for 9.x, {@code sm_80} for 8.x (a cubin
     * runs on every GPU of its major version from its minor version on), none for others, which load the
     * {@link #ptx() PTX} instead.
     *
     * @param major the compute capability's major version
     * @param minor its minor version
     * @return the cubin's bytes, or an empty array when none fits
     */
    public static byte[] cubin(int major, int minor) {
        requireAvailable();
        return switch (major) {
            case 8 -> require(KERNEL_DIRECTORY + "ki_templates.sm_80.cubin");
            case 9 -> require(KERNEL_DIRECTORY + "ki_templates.sm_90.cubin");
            default -> new byte[0];
        };
    }

    /**
     * @return what the build recorded: {@code nvcc.version}, {@code ptx.isa}, {@code ptx.arch},
     *         {@code cubin.archs}, {@code kernels}, and {@code registers.<arch>.<kernel>}
     */
    public static Properties buildInfo() {
        Properties p = new Properties();
        try (InputStream in = new ByteArrayInputStream(require(PROPERTIES))) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    /**
     * @param name a file of the CUDA sources, such as {@code "device.cuh"}
     * @return its text
     * @throws IllegalArgumentException if the jar has no such source
     */
    public static String cudaSource(String name) {
        byte[] bytes = read(CUDA_SOURCE_DIRECTORY + name);
        if (bytes == null) {
            throw new IllegalArgumentException("ki-kernels has no CUDA source " + name);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void requireAvailable() {
        if (!available()) {
            throw new IllegalStateException("this build of ki-kernels has no CUDA kernels: it was built without nvcc "
                    + "(install the CUDA toolkit, or point NVCC or CUDA_HOME at one, and rebuild ki-kernels)");
        }
    }

    private static byte[] require(String resource) {
        requireAvailable();
        byte[] bytes = read(resource);
        if (bytes == null) {
            throw new IllegalStateException("this build of ki-kernels is incomplete: " + resource + " is missing");
        }
        return bytes;
    }

    private static byte[] read(String resource) {
        try (InputStream in = KiKernels.class.getClassLoader().getResourceAsStream(resource)) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }
}

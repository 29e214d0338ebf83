package dev.gdasync.ki.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where the executor gets the KI kernels' images: what the build of ki-kernels packaged (nvcc output under
 * {@code dev/gdasync/ki/kernels/}), or, in tests, images made up on the spot. The methods mirror the
 * kernels' own loader: a cubin that fits a compute capability, and the PTX.
 */
interface KernelImages {
    /** The resource folder of the built kernels. */
    String FOLDER = "dev/gdasync/ki/kernels/";
    /** The PTX resource. */
    String PTX = FOLDER + "ki_templates.ptx";
    /** The architectures cubins are built for, as {@code sm_XY} numbers. */
    List<Integer> CUBIN_ARCHS = List.of(80, 90);

    /**
     * @param major a device's compute capability, major number
     * @param minor its minor number
     * @return the cubin that runs on that device, or an empty array when none does
     */
    byte[] cubin(int major, int minor);

    /** @return the PTX text, or an empty string when the build has none */
    String ptx();

    /** @return what the build holds, for messages (for example "cubins for sm_80, sm_90 and PTX") */
    String contents();

    /**
     * @param arch an {@code sm_XY} number
     * @return the resource name of that cubin
     */
    static String cubinResource(int arch) {
        return FOLDER + "ki_templates.sm_" + arch + ".cubin";
    }

    /**
     * The images packaged with ki-kernels.
     *
     * @param loader the class loader to read them with
     * @return the packaged images (possibly none)
     */
    static KernelImages packaged(ClassLoader loader) {
        List<Integer> archs = new ArrayList<>();
        List<byte[]> cubins = new ArrayList<>();
        for (int arch : CUBIN_ARCHS) {
            Optional<byte[]> bytes = read(loader, cubinResource(arch));
            if (bytes.isPresent() && bytes.get().length > 0) {
                archs.add(arch);
                cubins.add(bytes.get());
            }
        }
        String ptx = read(loader, PTX).map(b -> new String(b, StandardCharsets.US_ASCII)).orElse("");
        return of(archs, cubins, ptx);
    }

    /**
     * Images from memory.
     *
     * @param archs  the cubins' architectures
     * @param cubins the cubins, in the same order
     * @param ptx    the PTX, or an empty string
     * @return the images
     */
    static KernelImages of(List<Integer> archs, List<byte[]> cubins, String ptx) {
        if (archs.size() != cubins.size()) {
            throw new IllegalArgumentException(archs.size() + " architectures for " + cubins.size() + " cubins");
        }
        List<Integer> a = List.copyOf(archs);
        List<byte[]> c = List.copyOf(cubins);
        return new KernelImages() {
            @Override
            public byte[] cubin(int major, int minor) {
                return ImageChoice.bestCubin(a, major, minor).map(arch -> c.get(a.indexOf(arch)).clone())
                        .orElse(new byte[0]);
            }

            @Override
            public String ptx() {
                return ptx;
            }

            @Override
            public String contents() {
                return ImageChoice.contents(a, ptx);
            }
        };
    }

    private static Optional<byte[]> read(ClassLoader loader, String name) {
        try (InputStream in = loader.getResourceAsStream(name)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the KI kernel resource " + name, e);
        }
    }
}

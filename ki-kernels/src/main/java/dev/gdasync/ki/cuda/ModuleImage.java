package dev.gdasync.ki.cuda;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A module image the driver loads with {@code cuModuleLoadData}: a cubin built for one GPU architecture,
 * or PTX, which the driver compiles (JIT) for the GPU at load time.
 *
 * @param kind        cubin or PTX
 * @param bytes       the image (PTX as ASCII text, without a terminating NUL)
 * @param description which image and why it was chosen, for names and messages
 */
record ModuleImage(Kind kind, byte[] bytes, String description) {
    /** The two kinds of image. */
    enum Kind {
        /** Machine code for one architecture. */
        CUBIN,
        /** Virtual-ISA text that the driver JIT-compiles. */
        PTX
    }

    ModuleImage {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(description, "description");
        if (bytes == null || bytes.length == 0) {
            throw new IllegalArgumentException("an empty " + kind + " image: " + description);
        }
    }

    /** @return the PTX text (PTX images only) */
    String text() {
        if (kind != Kind.PTX) {
            throw new IllegalStateException("a cubin is not text: " + description);
        }
        return new String(bytes, StandardCharsets.US_ASCII);
    }
}

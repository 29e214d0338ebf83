package dev.gdasync.gdsync.cuda;

import java.util.Optional;

/**
 * The driver's CUDA version ({@code cuDriverGetVersion}: 1000 × major + 10 × minor) and the oldest one
 * this binding works with: JCuda 12.6.0's native library is built against the CUDA 12.0 headers and
 * calls the entry points that version introduced.
 */
public final class DriverVersion {
    /** The oldest driver API version the binding needs: CUDA 12.0. */
    public static final int MINIMUM = 12000;

    private DriverVersion() {
    }

    /**
     * @param version a {@code cuDriverGetVersion} value
     * @return {@code major.minor}, for example {@code 12.4}
     */
    public static String format(int version) {
        return (version / 1000) + "." + (version % 1000) / 10;
    }

    /**
     * @param version the driver's {@code cuDriverGetVersion} value
     * @return why the driver is too old, or empty when it is recent enough
     */
    public static Optional<String> tooOld(int version) {
        if (version >= MINIMUM) {
            return Optional.empty();
        }
        return Optional.of("the NVIDIA driver supports CUDA " + format(version) + ", but gdasync's CUDA binding "
                + "(JCuda 12.6.0) needs CUDA " + format(MINIMUM) + " or newer: update the NVIDIA driver to R525 or newer");
    }
}

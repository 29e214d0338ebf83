package dev.gdasync.ki.cuda;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which KI kernel image a device loads. A cubin built for {@code sm_XY} runs on devices of compute
 * capability X.y with y &ge; Y (binary compatibility holds within a major version only); the newest such
 * cubin wins. Without one, the PTX is loaded and the driver compiles it for the device, which works when
 * the PTX's target is not newer than the device and its ISA version not newer than the driver.
 */
final class ImageChoice {
    private static final Pattern TARGET = Pattern.compile("^\\s*\\.target\\s+sm_(\\d+)", Pattern.MULTILINE);
    private static final Pattern VERSION = Pattern.compile("^\\s*\\.version\\s+(\\d+\\.\\d+)", Pattern.MULTILINE);

    private ImageChoice() {
    }

    /**
     * @param archs the cubins' {@code sm_XY} numbers
     * @param major the device's compute capability, major
     * @param minor its minor
     * @return the newest architecture whose cubin runs on the device
     */
    static Optional<Integer> bestCubin(List<Integer> archs, int major, int minor) {
        return archs.stream().filter(a -> a / 10 == major && a % 10 <= minor).max(Integer::compare);
    }

    /**
     * @param ptx PTX text
     * @return its {@code .target sm_XY} number, if it has one
     */
    static Optional<Integer> ptxTarget(String ptx) {
        Matcher m = TARGET.matcher(ptx);
        return m.find() ? Optional.of(Integer.parseInt(m.group(1))) : Optional.empty();
    }

    /**
     * @param ptx PTX text
     * @return its {@code .version} (the PTX ISA version), if it has one
     */
    static Optional<String> ptxVersion(String ptx) {
        Matcher m = VERSION.matcher(ptx);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * Chooses the image for a device.
     *
     * @param images what the build holds
     * @param major  the device's compute capability, major
     * @param minor  its minor
     * @return the image, with a description of what it is and why
     * @throws IllegalStateException if no image can run on the device; the message says what to build
     */
    static ModuleImage choose(KernelImages images, int major, int minor) {
        String cc = major + "." + minor;
        byte[] cubin = images.cubin(major, minor);
        if (cubin.length > 0) {
            return new ModuleImage(ModuleImage.Kind.CUBIN, cubin, "cubin for compute capability " + cc);
        }
        String ptx = images.ptx();
        if (ptx.isEmpty()) {
            throw new IllegalStateException("no KI kernel image runs on compute capability " + cc + ": this build of "
                    + "ki-kernels has " + images.contents() + "; build ki-kernels with nvcc (cubins for sm_"
                    + major + minor + ", or PTX)");
        }
        Optional<Integer> target = ptxTarget(ptx);
        if (target.isPresent() && target.get() > major * 10 + minor) {
            throw new IllegalStateException("no KI kernel image runs on compute capability " + cc + ": this build of "
                    + "ki-kernels has " + images.contents() + ", and its PTX targets sm_" + target.get()
                    + ", newer than the device; build ki-kernels with nvcc for sm_" + major + minor);
        }
        return new ModuleImage(ModuleImage.Kind.PTX, ptx.getBytes(StandardCharsets.US_ASCII),
                "PTX" + target.map(t -> " for sm_" + t).orElse("") + ptxVersion(ptx).map(v -> " (ISA " + v + ")").orElse("")
                        + ", JIT-compiled by the driver for compute capability " + cc + " (no cubin fits)");
    }

    /**
     * @param archs the cubins' architectures
     * @param ptx   the PTX, or an empty string
     * @return what a build holds, in words
     */
    static String contents(List<Integer> archs, String ptx) {
        String cubins = archs.isEmpty() ? "no cubin"
                : "cubins for " + String.join(", ", archs.stream().map(a -> "sm_" + a).toList());
        String p = ptx.isEmpty() ? "no PTX" : "PTX" + ptxTarget(ptx).map(t -> " for sm_" + t).orElse("");
        return cubins + " and " + p;
    }
}

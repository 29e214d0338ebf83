package dev.gdasync.ki.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Which image a device loads: a fitting cubin, else PTX the driver compiles, else a message. */
class ImageChoiceTest {
    private static final String PTX = "//\n// Generated\n//\n\n.version 8.0\n.target sm_80\n.address_size 64\n";
    private static final byte[] SM80 = {1, 8, 0};
    private static final byte[] SM90 = {1, 9, 0};

    private static KernelImages both() {
        return KernelImages.of(List.of(80, 90), List.of(SM80, SM90), PTX);
    }

    @Test
    void aCubinRunsWithinItsMajorVersionFromItsMinorUp() {
        List<Integer> archs = List.of(80, 86, 90);
        assertEquals(Optional.of(80), ImageChoice.bestCubin(archs, 8, 0));
        assertEquals(Optional.of(86), ImageChoice.bestCubin(archs, 8, 6));
        assertEquals(Optional.of(86), ImageChoice.bestCubin(archs, 8, 9));
        assertEquals(Optional.of(90), ImageChoice.bestCubin(archs, 9, 0));
        assertEquals(Optional.empty(), ImageChoice.bestCubin(archs, 7, 5));
        assertEquals(Optional.empty(), ImageChoice.bestCubin(archs, 10, 0));
        assertEquals(Optional.empty(), ImageChoice.bestCubin(List.of(86), 8, 0));
    }

    @Test
    void theFittingCubinWins() {
        ModuleImage i = ImageChoice.choose(both(), 8, 9);
        assertEquals(ModuleImage.Kind.CUBIN, i.kind());
        assertArrayEquals(SM80, i.bytes());
        assertEquals("cubin for compute capability 8.9", i.description());
        assertArrayEquals(SM90, ImageChoice.choose(both(), 9, 0).bytes());
    }

    @Test
    void withoutAFittingCubinThePtxIsUsed() {
        ModuleImage i = ImageChoice.choose(both(), 12, 0);
        assertEquals(ModuleImage.Kind.PTX, i.kind());
        assertEquals(PTX, i.text());
        assertEquals("PTX for sm_80 (ISA 8.0), JIT-compiled by the driver for compute capability 12.0 (no cubin fits)",
                i.description());
    }

    @Test
    void ptxNewerThanTheDeviceCannotBeUsed() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ImageChoice.choose(both(), 7, 5));
        assertEquals("no KI kernel image runs on compute capability 7.5: this build of ki-kernels has cubins for sm_80, "
                + "sm_90 and PTX for sm_80, and its PTX targets sm_80, newer than the device; build ki-kernels with "
                + "nvcc for sm_75", e.getMessage());
    }

    @Test
    void aBuildWithoutImagesSaysSo() {
        KernelImages none = KernelImages.of(List.of(), List.of(), "");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ImageChoice.choose(none, 9, 0));
        assertEquals("no KI kernel image runs on compute capability 9.0: this build of ki-kernels has no cubin and no "
                + "PTX; build ki-kernels with nvcc (cubins for sm_90, or PTX)", e.getMessage());
    }

    @Test
    void ptxHeadersAreRead() {
        assertEquals(Optional.of(80), ImageChoice.ptxTarget(PTX));
        assertEquals(Optional.of("8.0"), ImageChoice.ptxVersion(PTX));
        assertEquals(Optional.of(90), ImageChoice.ptxTarget(".version 9.0\n.target sm_90a\n"));
        assertEquals(Optional.empty(), ImageChoice.ptxTarget("no header"));
        ModuleImage i = ImageChoice.choose(KernelImages.of(List.of(), List.of(), "// hand-written\n"), 9, 0);
        assertEquals("PTX, JIT-compiled by the driver for compute capability 9.0 (no cubin fits)", i.description());
    }

    @Test
    void emptyImagesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ModuleImage(ModuleImage.Kind.CUBIN, new byte[0], "x"));
        assertThrows(IllegalStateException.class,
                () -> new ModuleImage(ModuleImage.Kind.CUBIN, new byte[] {1}, "x").text());
        assertThrows(IllegalArgumentException.class, () -> KernelImages.of(List.of(80), List.of(), ""));
    }

    @Test
    void packagedImagesAreReadFromTheKernelsResourceFolder(@TempDir Path root) throws IOException {
        Path folder = Files.createDirectories(root.resolve("dev/gdasync/ki/kernels"));
        Files.write(folder.resolve("ki_templates.sm_80.cubin"), SM80);
        Files.writeString(folder.resolve("ki_templates.ptx"), PTX, StandardCharsets.US_ASCII);
        try (URLClassLoader loader = new URLClassLoader(new URL[] {root.toUri().toURL()}, null)) {
            KernelImages images = KernelImages.packaged(loader);
            assertArrayEquals(SM80, images.cubin(8, 6));
            assertEquals(0, images.cubin(9, 0).length);
            assertEquals(PTX, images.ptx());
            assertEquals("cubins for sm_80 and PTX for sm_80", images.contents());
        }
        assertEquals("dev/gdasync/ki/kernels/ki_templates.sm_90.cubin", KernelImages.cubinResource(90));
        assertEquals("dev/gdasync/ki/kernels/ki_templates.ptx", KernelImages.PTX);
    }

    @Test
    void aBuildWithoutResourcesHasNoImages() {
        KernelImages images = KernelImages.packaged(new ClassLoader(null) { });
        assertEquals(0, images.cubin(9, 0).length);
        assertEquals("", images.ptx());
        assertEquals("no cubin and no PTX", images.contents());
    }
}

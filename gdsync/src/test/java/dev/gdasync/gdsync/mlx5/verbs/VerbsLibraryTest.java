package dev.gdasync.gdsync.mlx5.verbs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Loading rdma-core and opening a device where there is none: the libraries load wherever rdma-core is installed, a
 * missing or foreign library is named with the Debian packages to install, and {@code open} on a machine without an
 * RDMA device says so and what to check (this build machine has rdma-core but no RDMA device).
 */
class VerbsLibraryTest {
    /** Debian's libibverbs-dev, which installs the header, depends on libibverbs1 and ibverbs-providers. */
    private static final Path HEADER = Path.of("/usr/include/infiniband/verbs.h");

    @Test
    void theLibrariesLoadWhereRdmaCoreIsInstalled() {
        Optional<String> problem = VerbsLibrary.problem();
        if (Files.exists(HEADER)) {
            assertEquals(Optional.empty(), problem, HEADER + " is installed, so libibverbs1 and ibverbs-providers are");
            assertTrue(VerbsLibrary.get().pageSize() >= 4096, "page size " + VerbsLibrary.get().pageSize());
            assertEquals(1, Integer.bitCount(VerbsLibrary.get().pageSize()), "the page size is a power of two");
        } else {
            assertTrue(problem.isPresent(), "no rdma-core headers, yet the libraries loaded: fine, but then install the "
                    + "headers too (libibverbs-dev)");
            assertTrue(problem.get().contains("libibverbs1") || problem.get().contains("ibverbs-providers"), problem.get());
        }
    }

    @Test
    void aMissingVerbsLibraryIsNamedWithItsDebianPackages() {
        VerbsLibrary.Probe probe = VerbsLibrary.probe("libibverbs-gdasync-missing.so.1", VerbsLibrary.MLX5);
        assertNull(probe.library());
        assertTrue(probe.problem().startsWith("libibverbs-gdasync-missing.so.1 not found: rdma-core's verbs library is "
                + "not installed; install Debian's libibverbs1 and ibverbs-providers"), probe.problem());
    }

    @Test
    void aMissingMlx5ProviderIsNamedWithItsDebianPackage() {
        VerbsLibrary.Probe probe = VerbsLibrary.probe("libc.so.6", "libmlx5-gdasync-missing.so.1");
        assertNull(probe.library());
        assertTrue(probe.problem().startsWith("libmlx5-gdasync-missing.so.1 not found: rdma-core's mlx5 provider"),
                probe.problem());
        assertTrue(probe.problem().contains("ibverbs-providers"), probe.problem());
    }

    @Test
    void aLibraryWithoutTheVerbsIsRefused() {
        // libc loads but exports no verbs: the first missing function is named.
        VerbsLibrary.Probe probe = VerbsLibrary.probe("libc.so.6", "libc.so.6");
        assertNull(probe.library());
        assertTrue(probe.problem().startsWith("libc.so.6 does not export ibv_get_device_list: it is not rdma-core's verbs "
                + "library"), probe.problem());
    }

    @Test
    void openWithoutAnRdmaDeviceSaysSoAndWhatToCheck() throws IOException {
        Optional<String> problem = VerbsLibrary.problem();
        if (problem.isPresent()) {
            VerbsException e = assertThrows(VerbsException.class, () -> HardwareMlx5Device.open(null, 1, 0));
            assertEquals(problem.get(), e.getMessage());
            return;
        }
        List<String> sysfs = sysfsDevices();
        if (sysfs.isEmpty()) {
            // This build machine: rdma-core, no RDMA device, no kernel RDMA.
            VerbsException e = assertThrows(VerbsException.class, () -> HardwareMlx5Device.open(null, 1, 0));
            assertTrue(e.getMessage().startsWith("no RDMA device: ibv_get_device_list found none ("), e.getMessage());
            assertTrue(e.getMessage().contains(DeviceList.SYSFS_DEVICES.toString()), e.getMessage());
            assertTrue(e.getMessage().endsWith("is a ConnectX NIC with mlx5_core and mlx5_ib loaded?)"), e.getMessage());
            assertEquals("ibv_get_device_list", e.call());
            VerbsException named = assertThrows(VerbsException.class, () -> HardwareMlx5Device.open("mlx5_0", 1, 0));
            assertTrue(named.getMessage().startsWith("no RDMA device: ibv_get_device_list found none ("), named.getMessage());
        } else {
            // A machine with RDMA devices: an unknown name lists those found.
            VerbsException e = assertThrows(VerbsException.class,
                    () -> HardwareMlx5Device.open("gdasync-no-such-device", 1, 0));
            assertTrue(e.getMessage().startsWith("no RDMA device named gdasync-no-such-device: ibv_get_device_list found "),
                    e.getMessage());
            assertTrue(sysfs.stream().anyMatch(e.getMessage()::contains), e.getMessage() + " names none of " + sysfs);
        }
    }

    @Test
    void openChecksItsArgumentsBeforeLookingForADevice() {
        IllegalArgumentException port0 = assertThrows(IllegalArgumentException.class, () -> HardwareMlx5Device.open(null, 0, 0));
        assertEquals("a port number is 1 to 255, got 0", port0.getMessage());
        assertThrows(IllegalArgumentException.class, () -> HardwareMlx5Device.open(null, 256, 0));
        IllegalArgumentException gid = assertThrows(IllegalArgumentException.class, () -> HardwareMlx5Device.open(null, 1, -1));
        assertTrue(gid.getMessage().startsWith("a GID index is 0 to 255"), gid.getMessage());
        assertThrows(IllegalArgumentException.class, () -> HardwareMlx5Device.open(null, 1, 256));
    }

    @Test
    void theSysfsDescriptionSaysWhatTheKernelShows(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("infiniband");
        assertEquals(missing + " does not exist: the kernel has no RDMA device", DeviceList.describeSysfs(missing));
        Files.createDirectory(missing);
        assertEquals(missing + " is empty", DeviceList.describeSysfs(missing));
        Files.createDirectory(missing.resolve("mlx5_1"));
        Files.createDirectory(missing.resolve("mlx5_0"));
        assertTrue(DeviceList.describeSysfs(missing).startsWith(missing + " lists mlx5_0, mlx5_1, but verbs cannot use "
                + "them: is ib_uverbs loaded"), DeviceList.describeSysfs(missing));
    }

    @Test
    void failedCallsNameTheCallTheErrnoAndItsMeaning() {
        VerbsException rc = VerbsException.ofReturn("ibv_modify_qp(mlx5_0, QP 0x12, INIT->RTR)", 22, 0, "check the GID");
        assertEquals("ibv_modify_qp(mlx5_0, QP 0x12, INIT->RTR) failed: returned 22 (EINVAL: invalid argument); check the "
                + "GID", rc.getMessage());
        assertEquals(22, rc.errno());
        VerbsException minusOne = VerbsException.ofReturn("ibv_query_gid(mlx5_0, port 1, index 3)", -1, 61, null);
        assertEquals("ibv_query_gid(mlx5_0, port 1, index 3) failed: returned -1 with errno 61 (ENODATA: no data "
                + "available)", minusOne.getMessage());
        assertEquals(61, minusOne.errno());
        VerbsException pointer = VerbsException.ofErrno("ibv_reg_mr(mlx5_0)", 12, null);
        assertEquals("ibv_reg_mr(mlx5_0) failed: errno 12 (ENOMEM: out of memory)", pointer.getMessage());
        assertEquals("ibv_reg_mr(mlx5_0)", pointer.call());
        assertEquals("errno 4242", Errno.describe(4242));
    }

    private static List<String> sysfsDevices() throws IOException {
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(DeviceList.SYSFS_DEVICES)) {
            try (Stream<Path> s = Files.list(DeviceList.SYSFS_DEVICES)) {
                s.forEach(p -> names.add(p.getFileName().toString()));
            }
        }
        return names;
    }
}

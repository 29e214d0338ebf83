package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.nic.Access;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Java verbs layouts and constants against rdma-core's {@code infiniband/verbs.h} and {@code mlx5dv.h}: a C probe
 * compiled with the headers prints the size and alignment of every structure the bindings use, the offset of every
 * field, and every constant. Both ways are checked: each field the Java layouts name must be in the probe's output with
 * the same offset, and each line the probe prints must match a Java field or constant, so neither side can drift.
 */
class VerbsLayoutTest {
    private static final Path HEADER = Path.of("/usr/include/infiniband/verbs.h");

    /** The structures, by their C names; a nested member equal to one of these is checked by its offset only. */
    private static final Map<String, MemoryLayout> TYPES = new LinkedHashMap<>();
    /** Structures of which the Java side declares only the head. */
    private static final List<String> HEADS_ONLY = List.of("ibv_qp");

    static {
        TYPES.put("ibv_gid", VerbsLayouts.IBV_GID);
        TYPES.put("ibv_global_route", VerbsLayouts.IBV_GLOBAL_ROUTE);
        TYPES.put("ibv_ah_attr", VerbsLayouts.IBV_AH_ATTR);
        TYPES.put("ibv_qp_cap", VerbsLayouts.IBV_QP_CAP);
        TYPES.put("ibv_qp_init_attr", VerbsLayouts.IBV_QP_INIT_ATTR);
        TYPES.put("ibv_qp_attr", VerbsLayouts.IBV_QP_ATTR);
        TYPES.put("ibv_port_attr", VerbsLayouts.IBV_PORT_ATTR);
        TYPES.put("ibv_device_attr", VerbsLayouts.IBV_DEVICE_ATTR);
        TYPES.put("ibv_qp", VerbsLayouts.IBV_QP);
        TYPES.put("ibv_mr", VerbsLayouts.IBV_MR);
        TYPES.put("mlx5dv_qp", VerbsLayouts.MLX5DV_QP);
        TYPES.put("mlx5dv_cq", VerbsLayouts.MLX5DV_CQ);
        TYPES.put("mlx5dv_obj", VerbsLayouts.MLX5DV_OBJ);
    }

    @TempDir
    static Path dir;
    private static Map<String, Long> probe;
    private static String skipped;

    @BeforeAll
    static void runProbe() throws Exception {
        if (!Files.exists(HEADER)) {
            skipped = HEADER + " is missing (Debian's libibverbs-dev; scripts/test installs it as root): the verbs layouts"
                    + " are not checked against rdma-core";
            System.out.println("VerbsLayoutTest skipped: " + skipped);
            return;
        }
        Path exe = dir.resolve("verbs_probe");
        Path src = Path.of(System.getProperty("basedir", "")).toAbsolutePath().resolve("src/test/c/verbs_probe.c");
        String compile = run(List.of("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", exe.toString(), src.toString()));
        assertTrue(Files.isExecutable(exe), "gcc failed on the verbs probe:\n" + compile);
        probe = new LinkedHashMap<>();
        for (String line : run(List.of(exe.toString())).split("\n")) {
            int sp = line.indexOf(' ');
            if (sp > 0) {
                probe.put(line.substring(0, sp), Long.parseLong(line.substring(sp + 1).strip()));
            }
        }
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
        assertEquals(0, p.exitValue(), command + " failed:\n" + new String(out, StandardCharsets.UTF_8));
        return new String(out, StandardCharsets.UTF_8);
    }

    /** Every named field of a layout, by its dotted path, with its offset; nested known structures are not entered. */
    private static void fields(String prefix, GroupLayout group, long base, Map<String, Long> out) {
        for (MemoryLayout member : group.memberLayouts()) {
            if (member instanceof PaddingLayout) {
                continue;
            }
            String name = member.name().orElseThrow(() -> new AssertionError(prefix + " has an unnamed member " + member));
            String path = prefix + "." + name;
            long offset = base + group.byteOffset(MemoryLayout.PathElement.groupElement(name));
            out.put(path, offset);
            if (member instanceof GroupLayout nested && !isKnownType(nested)) {
                fields(path, nested, offset, out);
            }
        }
    }

    private static boolean isKnownType(MemoryLayout layout) {
        for (MemoryLayout t : TYPES.values()) {
            if (t.withoutName().equals(layout.withoutName())) {
                return true;
            }
        }
        return false;
    }

    @Test
    void everySizeAlignmentAndOffsetIsRdmaCores() {
        assumeTrue(skipped == null, () -> skipped);
        Map<String, Long> java = new LinkedHashMap<>();
        for (Map.Entry<String, MemoryLayout> t : TYPES.entrySet()) {
            fields(t.getKey(), (GroupLayout) t.getValue(), 0, java);
            long cSize = value("sizeof." + t.getKey());
            if (HEADS_ONLY.contains(t.getKey())) {
                assertTrue(t.getValue().byteSize() <= cSize, t.getKey() + ": the Java head (" + t.getValue().byteSize()
                        + " bytes) is longer than the structure (" + cSize + ")");
            } else {
                assertEquals(cSize, t.getValue().byteSize(), "size of " + t.getKey());
            }
            assertEquals(value("alignof." + t.getKey()), t.getValue().byteAlignment(), "alignment of " + t.getKey());
        }
        for (Map.Entry<String, Long> f : java.entrySet()) {
            assertEquals(value(f.getKey()), (long) f.getValue(), "offset of " + f.getKey());
        }
        TreeSet<String> unmatched = new TreeSet<>();
        for (String key : probe.keySet()) {
            boolean field = key.contains(".") && !key.startsWith("sizeof.") && !key.startsWith("alignof.");
            if (field && !java.containsKey(key)) {
                unmatched.add(key);
            }
        }
        assertTrue(unmatched.isEmpty(), "the probe prints fields no Java layout declares: " + unmatched);
        assertTrue(VerbsLayouts.PORT_ATTR_ROOM >= value("sizeof.ibv_port_attr"), "ibv_query_port needs room for the whole "
                + "structure");
    }

    @Test
    void everyConstantIsRdmaCores() {
        assumeTrue(skipped == null, () -> skipped);
        Map<String, Long> java = new HashMap<>();
        java.put("IBV_QPS_RESET", (long) VerbsConstants.IBV_QPS_RESET);
        java.put("IBV_QPS_INIT", (long) VerbsConstants.IBV_QPS_INIT);
        java.put("IBV_QPS_RTR", (long) VerbsConstants.IBV_QPS_RTR);
        java.put("IBV_QPS_RTS", (long) VerbsConstants.IBV_QPS_RTS);
        java.put("IBV_QPS_SQD", (long) VerbsConstants.IBV_QPS_SQD);
        java.put("IBV_QPS_SQE", (long) VerbsConstants.IBV_QPS_SQE);
        java.put("IBV_QPS_ERR", (long) VerbsConstants.IBV_QPS_ERR);
        java.put("IBV_QP_STATE", (long) VerbsConstants.IBV_QP_STATE);
        java.put("IBV_QP_ACCESS_FLAGS", (long) VerbsConstants.IBV_QP_ACCESS_FLAGS);
        java.put("IBV_QP_PKEY_INDEX", (long) VerbsConstants.IBV_QP_PKEY_INDEX);
        java.put("IBV_QP_PORT", (long) VerbsConstants.IBV_QP_PORT);
        java.put("IBV_QP_AV", (long) VerbsConstants.IBV_QP_AV);
        java.put("IBV_QP_PATH_MTU", (long) VerbsConstants.IBV_QP_PATH_MTU);
        java.put("IBV_QP_TIMEOUT", (long) VerbsConstants.IBV_QP_TIMEOUT);
        java.put("IBV_QP_RETRY_CNT", (long) VerbsConstants.IBV_QP_RETRY_CNT);
        java.put("IBV_QP_RNR_RETRY", (long) VerbsConstants.IBV_QP_RNR_RETRY);
        java.put("IBV_QP_RQ_PSN", (long) VerbsConstants.IBV_QP_RQ_PSN);
        java.put("IBV_QP_MAX_QP_RD_ATOMIC", (long) VerbsConstants.IBV_QP_MAX_QP_RD_ATOMIC);
        java.put("IBV_QP_MIN_RNR_TIMER", (long) VerbsConstants.IBV_QP_MIN_RNR_TIMER);
        java.put("IBV_QP_SQ_PSN", (long) VerbsConstants.IBV_QP_SQ_PSN);
        java.put("IBV_QP_MAX_DEST_RD_ATOMIC", (long) VerbsConstants.IBV_QP_MAX_DEST_RD_ATOMIC);
        java.put("IBV_QP_DEST_QPN", (long) VerbsConstants.IBV_QP_DEST_QPN);
        java.put("IBV_QPT_RC", (long) VerbsConstants.IBV_QPT_RC);
        java.put("IBV_MTU_256", (long) VerbsConstants.IBV_MTU_256);
        java.put("IBV_MTU_512", (long) VerbsConstants.IBV_MTU_512);
        java.put("IBV_MTU_1024", (long) VerbsConstants.IBV_MTU_1024);
        java.put("IBV_MTU_2048", (long) VerbsConstants.IBV_MTU_2048);
        java.put("IBV_MTU_4096", (long) VerbsConstants.IBV_MTU_4096);
        java.put("IBV_PORT_DOWN", (long) VerbsConstants.IBV_PORT_DOWN);
        java.put("IBV_PORT_INIT", (long) VerbsConstants.IBV_PORT_INIT);
        java.put("IBV_PORT_ARMED", (long) VerbsConstants.IBV_PORT_ARMED);
        java.put("IBV_PORT_ACTIVE", (long) VerbsConstants.IBV_PORT_ACTIVE);
        java.put("IBV_LINK_LAYER_UNSPECIFIED", (long) VerbsConstants.IBV_LINK_LAYER_UNSPECIFIED);
        java.put("IBV_LINK_LAYER_INFINIBAND", (long) VerbsConstants.IBV_LINK_LAYER_INFINIBAND);
        java.put("IBV_LINK_LAYER_ETHERNET", (long) VerbsConstants.IBV_LINK_LAYER_ETHERNET);
        java.put("IBV_ACCESS_LOCAL_WRITE", (long) VerbsConstants.IBV_ACCESS_LOCAL_WRITE);
        java.put("IBV_ACCESS_REMOTE_WRITE", (long) VerbsConstants.IBV_ACCESS_REMOTE_WRITE);
        java.put("IBV_ACCESS_REMOTE_READ", (long) VerbsConstants.IBV_ACCESS_REMOTE_READ);
        java.put("IBV_ACCESS_REMOTE_ATOMIC", (long) VerbsConstants.IBV_ACCESS_REMOTE_ATOMIC);
        java.put("IBV_SYSFS_NAME_MAX", (long) DeviceList.NAME_MAX);
        java.put("MLX5DV_OBJ_QP", VerbsConstants.MLX5DV_OBJ_QP);
        java.put("MLX5DV_OBJ_CQ", VerbsConstants.MLX5DV_OBJ_CQ);
        for (Map.Entry<String, Long> e : java.entrySet()) {
            assertEquals(value(e.getKey()), (long) e.getValue(), e.getKey());
        }
        List<String> unmatched = new ArrayList<>();
        for (String key : probe.keySet()) {
            if (!key.contains(".") && !java.containsKey(key)) {
                unmatched.add(key);
            }
        }
        assertTrue(unmatched.isEmpty(), "the probe prints constants the Java side does not check: " + unmatched);
        // The project's access flags are verbs' own bits, passed to ibv_reg_mr unchanged.
        assertEquals(value("IBV_ACCESS_LOCAL_WRITE"), Access.LOCAL_WRITE);
        assertEquals(value("IBV_ACCESS_REMOTE_WRITE"), Access.REMOTE_WRITE);
        assertEquals(value("IBV_ACCESS_REMOTE_READ"), Access.REMOTE_READ);
        assertEquals(value("IBV_ACCESS_REMOTE_ATOMIC"), Access.REMOTE_ATOMIC);
    }

    private static long value(String name) {
        Long v = probe.get(name);
        assertTrue(v != null, "the probe printed no " + name);
        return v;
    }
}

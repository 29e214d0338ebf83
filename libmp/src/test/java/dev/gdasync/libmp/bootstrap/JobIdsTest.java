package dev.gdasync.libmp.bootstrap;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JobIdsTest {

    @Test
    void validity() {
        assertTrue(JobIds.isValid("slurm-123.0"));
        assertTrue(JobIds.isValid("a".repeat(64)));
        assertFalse(JobIds.isValid("a".repeat(65)));
        assertFalse(JobIds.isValid(""));
        assertFalse(JobIds.isValid("."));
        assertFalse(JobIds.isValid(".."));
        assertFalse(JobIds.isValid("a/b"));
        assertFalse(JobIds.isValid(null));
        BootstrapException e = assertThrows(BootstrapException.class, () -> JobIds.require("x y", "GDASYNC_JOB_ID"));
        assertTrue(e.getMessage().startsWith("GDASYNC_JOB_ID='x y' is not a valid job id"), e.getMessage());
    }

    @Test
    void sanitizeMakesAnyTextValid() {
        assertEquals("ompi-prterun-host-1_1", JobIds.sanitize("ompi-prterun-host-1@1"));
        assertEquals(64, JobIds.sanitize("x".repeat(100)).length());
        assertTrue(JobIds.isValid(JobIds.sanitize("")));
        assertTrue(JobIds.isValid(JobIds.sanitize("..")));
        assertTrue(JobIds.isValid(JobIds.sanitize("é/ü")));
    }

    @Test
    void randomIdsDiffer() {
        String a = JobIds.random("local");
        assertTrue(a.matches("local-[0-9a-f]{16}"), a);
        assertNotEquals(a, JobIds.random("local"));
    }
}

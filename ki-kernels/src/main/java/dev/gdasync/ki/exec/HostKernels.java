package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;

/** What the host kernels share. */
final class HostKernels {
    private HostKernels() {
    }

    /**
     * Reads a wait entry as a kernel does: an entry it cannot use (an unknown condition) is reported as
     * INVALID and gives null.
     */
    static KiTable.WaitEntry waitEntry(KiTable table, int i) {
        try {
            return table.waitEntry(i);
        } catch (IllegalArgumentException e) {
            table.report(KiTableLayout.STATUS_INVALID, KiTableLayout.KIND_WAIT, i);
            return null;
        }
    }
}

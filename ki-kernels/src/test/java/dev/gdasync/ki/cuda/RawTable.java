package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Test support: writes a KI table by hand (raw addresses, no NIC), in the layout of {@link KiTableLayout}.
 */
final class RawTable {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A send entry: store dbrecValue at dbrec, then dbValue at db. */
    record Send(long dbrec, int dbrecValue, long db, long dbValue) {
    }

    /** A wait entry: wait until word cond value, then store flagValue at flag (if not 0). */
    record Wait(long word, int value, int cond, long flag, int flagValue) {
    }

    /** A template entry: patch the work request at wqe (fields at the given offsets), then ring as a send. */
    record Template(long wqe, long dbrec, int dbrecValue, long db, long dbValue, int offSgeAddr, int offSgeLkey,
                    int offSgeLength, int offTotalLength, int offRemoteAddr, int offRkey) {
    }

    private RawTable() {
    }

    static long bytes(int sends, int waits, int templates) {
        return KiTableLayout.bytes(sends, waits, templates);
    }

    /**
     * @param dest      8-byte aligned, at least {@link #bytes} bytes
     * @param sends     send entries
     * @param waits     wait entries
     * @param templates how many (zeroed) template entries
     * @return the table
     */
    static KiTable write(MemorySegment dest, List<Send> sends, List<Wait> waits, int templates) {
        return write(dest, sends, waits, templates, List.of());
    }

    /**
     * @param dest      8-byte aligned, at least {@link #bytes} bytes
     * @param sends     send entries
     * @param waits     wait entries
     * @param templates how many template entries
     * @param filled    the first template entries' contents (the rest stay zero)
     * @return the table
     */
    static KiTable write(MemorySegment dest, List<Send> sends, List<Wait> waits, int templates, List<Template> filled) {
        long header = KiTableLayout.HEADER.byteSize();
        long send = KiTableLayout.SEND.byteSize();
        long wait = KiTableLayout.WAIT.byteSize();
        long size = bytes(sends.size(), waits.size(), templates);
        MemorySegment t = dest.asSlice(0, size);
        t.fill((byte) 0);
        h32(t, "magic", KiTableLayout.MAGIC);
        t.set(U16, KiTableLayout.offsetOf(KiTableLayout.HEADER, "version"), KiTableLayout.VERSION);
        t.set(U16, KiTableLayout.offsetOf(KiTableLayout.HEADER, "header_bytes"), (short) header);
        h32(t, "send_count", sends.size());
        h32(t, "wait_count", waits.size());
        h32(t, "template_count", templates);
        h32(t, "send_offset", (int) header);
        h32(t, "wait_offset", (int) (header + sends.size() * send));
        h32(t, "template_offset", (int) (header + sends.size() * send + waits.size() * wait));
        h32(t, "send_entry_bytes", (int) send);
        h32(t, "wait_entry_bytes", (int) wait);
        h32(t, "template_entry_bytes", (int) KiTableLayout.TEMPLATE.byteSize());
        t.set(U64, KiTableLayout.offsetOf(KiTableLayout.HEADER, "total_bytes"), size);
        for (int i = 0; i < sends.size(); i++) {
            Send s = sends.get(i);
            long at = header + i * send;
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.SEND, "dbrec_addr"), s.dbrec());
            t.set(U32, at + KiTableLayout.offsetOf(KiTableLayout.SEND, "dbrec_value"), s.dbrecValue());
            t.set(U32, at + KiTableLayout.offsetOf(KiTableLayout.SEND, "flags"), KiTableLayout.SEND_FENCE_SYSTEM);
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.SEND, "db_addr"), s.db());
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.SEND, "db_value"), s.dbValue());
        }
        for (int i = 0; i < waits.size(); i++) {
            Wait w = waits.get(i);
            long at = header + sends.size() * send + i * wait;
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.WAIT, "word_addr"), w.word());
            t.set(U32, at + KiTableLayout.offsetOf(KiTableLayout.WAIT, "value"), w.value());
            t.set(U32, at + KiTableLayout.offsetOf(KiTableLayout.WAIT, "cond"), w.cond());
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.WAIT, "flag_addr"), w.flag());
            t.set(U32, at + KiTableLayout.offsetOf(KiTableLayout.WAIT, "flag_value"), w.flagValue());
        }
        long templateBase = header + sends.size() * send + waits.size() * wait;
        for (int i = 0; i < filled.size(); i++) {
            Template e = filled.get(i);
            long at = templateBase + i * KiTableLayout.TEMPLATE.byteSize();
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "wqe_addr"), e.wqe());
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "dbrec_addr"), e.dbrec());
            t.set(U32, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "dbrec_value"), e.dbrecValue());
            t.set(U32, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "flags"), KiTableLayout.SEND_FENCE_SYSTEM);
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "db_addr"), e.db());
            t.set(U64, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "db_value"), e.dbValue());
            t.set(U16, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "off_sge_addr"), (short) e.offSgeAddr());
            t.set(U16, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "off_sge_lkey"), (short) e.offSgeLkey());
            t.set(U16, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "off_sge_length"), (short) e.offSgeLength());
            t.set(U16, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "off_total_length"), (short) e.offTotalLength());
            t.set(U16, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "off_remote_addr"), (short) e.offRemoteAddr());
            t.set(U16, at + KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, "off_rkey"), (short) e.offRkey());
        }
        return KiTable.read(t);
    }

    /** A table of the given counts whose entries all point at one scratch word. */
    static KiTable counts(MemorySegment dest, long word, int sends, int waits, int templates) {
        List<Send> s = java.util.stream.IntStream.range(0, sends).mapToObj(i -> new Send(word, i + 1, word, i + 1)).toList();
        List<Wait> w = java.util.stream.IntStream.range(0, waits).mapToObj(i -> new Wait(word, 0, 0, 0, 0)).toList();
        return write(dest, s, w, templates);
    }

    private static void h32(MemorySegment t, String field, int value) {
        t.set(U32, KiTableLayout.offsetOf(KiTableLayout.HEADER, field), value);
    }
}

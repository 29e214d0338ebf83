package dev.gdasync.gdsync.ki;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The binary layout of the KI descriptor table: the one definition on the Java side, mirrored by the
 * CUDA header of the KI device API ({@code ki-kernels/src/main/cuda/device.cuh}). Little-endian,
 * naturally aligned, documented in {@code docs/ki-descriptor-table.md}.
 *
 * <pre>
 * header (64 B)    magic u32 "GKIT" | version u16 | header_bytes u16 | send_count u32 | wait_count u32
 *                  | send_offset u32 | wait_offset u32 | send_entry_bytes u32 | wait_entry_bytes u32
 *                  | total_bytes u64 | template_count u32 | template_offset u32 | template_entry_bytes u32
 *                  | status_code u32 | status_kind u32 | status_index u32
 * send (32 B)      dbrec_addr u64 | dbrec_value u32 | flags u32 | db_addr u64 | db_value u64
 * wait (32 B)      word_addr u64 | value u32 | cond u32 | flag_addr u64 | flag_value u32 | reserved u32
 * template (64 B)  wqe_addr u64 | dbrec_addr u64 | dbrec_value u32 | flags u32 | db_addr u64 | db_value u64
 *                  | off_sge_addr u16 | off_sge_lkey u16 | off_sge_length u16 | off_total_length u16
 *                  | off_remote_addr u16 | off_rkey u16 | reserved[12]
 * </pre>
 * The status fields are written by the table's executor: the first failure (a wait that timed out, an
 * entry it could not use) with its kind and index, so the host can name the descriptor. The host writes them too,
 * by the same claim, to abort a running launch ({@link #STATUS_ABORTED}): the executor's waits watch the code.
 */
public final class KiTableLayout {
    /** "GKIT" as little-endian bytes. */
    public static final int MAGIC = 0x54494B47;
    /** The layout version; bumped whenever a field moves. */
    public static final short VERSION = 2;

    /** Send flag: the request writes a completion. */
    public static final int SEND_SIGNALED = 1;
    /** Send flag: a system-scope fence must separate the doorbell-record store from the doorbell store. */
    public static final int SEND_FENCE_SYSTEM = 1 << 1;
    /**
     * Template flag: the work request is an mlx5 WQE, whose fields are big-endian with 32-bit keys; otherwise
     * the software NIC's, little-endian with 64-bit keys. A field offset of {@link #FIELD_ABSENT} is not written.
     */
    public static final int TEMPLATE_MLX5 = 1 << 2;
    /** A template field offset that names no field (the remote target of a SEND WQE). */
    public static final int FIELD_ABSENT = 0xffff;

    /** Status code: no failure. */
    public static final int STATUS_OK = 0;
    /** Status code: a wait did not complete within its timeout (LibGDSync's {@code ERROR_TIMEOUT}, EAGAIN). */
    public static final int STATUS_TIMEOUT = 11;
    /** Status code: an entry could not be used (LibGDSync's {@code ERROR_INVALID}, EINVAL). */
    public static final int STATUS_INVALID = 22;
    /**
     * Status code: the host aborted the launch (the job failed: a peer's process is gone, a rank aborted), recorded
     * by the host with {@link #KIND_NONE} and index 0 through the same claim as the executor's failures. Every wait of
     * the device API watches the status word (every {@link #ABORT_POLLS} polls of its own word at most) and ends with
     * this code once it is set.
     */
    public static final int STATUS_ABORTED = 33;
    /** At most how many polls of its word a device-side wait makes between two looks at the table's status code. */
    public static final int ABORT_POLLS = 16;
    /**
     * Status code while a failure is being recorded: the executor claims the status word with a
     * compare-and-swap from {@link #STATUS_OK} to this value, writes kind and index, then the real code.
     */
    public static final int STATUS_CLAIMED = -1;

    /** Status kind: no failure, or a failure that is no entry's (a host abort). */
    public static final int KIND_NONE = 0;
    /** Status kind: a send entry. */
    public static final int KIND_SEND = 1;
    /** Status kind: a wait entry. */
    public static final int KIND_WAIT = 2;
    /** Status kind: a template entry. */
    public static final int KIND_TEMPLATE = 3;
    /** Status kind: the exchange template's inter-block barrier or send ordering (index 0: barrier). */
    public static final int KIND_BARRIER = 4;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The table header. */
    public static final StructLayout HEADER = MemoryLayout.structLayout(
            U32.withName("magic"),
            U16.withName("version"),
            U16.withName("header_bytes"),
            U32.withName("send_count"),
            U32.withName("wait_count"),
            U32.withName("send_offset"),
            U32.withName("wait_offset"),
            U32.withName("send_entry_bytes"),
            U32.withName("wait_entry_bytes"),
            U64.withName("total_bytes"),
            U32.withName("template_count"),
            U32.withName("template_offset"),
            U32.withName("template_entry_bytes"),
            U32.withName("status_code"),
            U32.withName("status_kind"),
            U32.withName("status_index")).withName("gds_ki_table_header");

    /** A send entry: the two stores that ring a prepared send. */
    public static final StructLayout SEND = MemoryLayout.structLayout(
            U64.withName("dbrec_addr"),
            U32.withName("dbrec_value"),
            U32.withName("flags"),
            U64.withName("db_addr"),
            U64.withName("db_value")).withName("gds_ki_send");

    /** A wait entry: the word to wait on, and the flag that releases a CQE once the wait passed. */
    public static final StructLayout WAIT = MemoryLayout.structLayout(
            U64.withName("word_addr"),
            U32.withName("value"),
            U32.withName("cond"),
            U64.withName("flag_addr"),
            U32.withName("flag_value"),
            MemoryLayout.paddingLayout(4)).withName("gds_ki_wait");

    /**
     * A template send: a prepared send whose dynamic fields a kernel thread patches in the send queue entry
     * (at the given offsets, little-endian) before ringing it, as GPU-initiated OpenSHMEM's templated WQEs.
     */
    public static final StructLayout TEMPLATE = MemoryLayout.structLayout(
            U64.withName("wqe_addr"),
            U64.withName("dbrec_addr"),
            U32.withName("dbrec_value"),
            U32.withName("flags"),
            U64.withName("db_addr"),
            U64.withName("db_value"),
            U16.withName("off_sge_addr"),
            U16.withName("off_sge_lkey"),
            U16.withName("off_sge_length"),
            U16.withName("off_total_length"),
            U16.withName("off_remote_addr"),
            U16.withName("off_rkey"),
            MemoryLayout.paddingLayout(12)).withName("gds_ki_template");

    static final VarHandle H_MAGIC = header("magic");
    static final VarHandle H_VERSION = header("version");
    static final VarHandle H_HEADER_BYTES = header("header_bytes");
    static final VarHandle H_SEND_COUNT = header("send_count");
    static final VarHandle H_WAIT_COUNT = header("wait_count");
    static final VarHandle H_SEND_OFFSET = header("send_offset");
    static final VarHandle H_WAIT_OFFSET = header("wait_offset");
    static final VarHandle H_SEND_ENTRY_BYTES = header("send_entry_bytes");
    static final VarHandle H_WAIT_ENTRY_BYTES = header("wait_entry_bytes");
    static final VarHandle H_TOTAL_BYTES = header("total_bytes");
    static final VarHandle H_TEMPLATE_COUNT = header("template_count");
    static final VarHandle H_TEMPLATE_OFFSET = header("template_offset");
    static final VarHandle H_TEMPLATE_ENTRY_BYTES = header("template_entry_bytes");
    static final VarHandle H_STATUS_CODE = header("status_code");
    static final VarHandle H_STATUS_KIND = header("status_kind");
    static final VarHandle H_STATUS_INDEX = header("status_index");

    static final VarHandle T_WQE_ADDR = template("wqe_addr");
    static final VarHandle T_DBREC_ADDR = template("dbrec_addr");
    static final VarHandle T_DBREC_VALUE = template("dbrec_value");
    static final VarHandle T_FLAGS = template("flags");
    static final VarHandle T_DB_ADDR = template("db_addr");
    static final VarHandle T_DB_VALUE = template("db_value");
    static final VarHandle T_OFF_SGE_ADDR = template("off_sge_addr");
    static final VarHandle T_OFF_SGE_LKEY = template("off_sge_lkey");
    static final VarHandle T_OFF_SGE_LENGTH = template("off_sge_length");
    static final VarHandle T_OFF_TOTAL_LENGTH = template("off_total_length");
    static final VarHandle T_OFF_REMOTE_ADDR = template("off_remote_addr");
    static final VarHandle T_OFF_RKEY = template("off_rkey");

    static final VarHandle S_DBREC_ADDR = send("dbrec_addr");
    static final VarHandle S_DBREC_VALUE = send("dbrec_value");
    static final VarHandle S_FLAGS = send("flags");
    static final VarHandle S_DB_ADDR = send("db_addr");
    static final VarHandle S_DB_VALUE = send("db_value");

    static final VarHandle W_WORD_ADDR = waitField("word_addr");
    static final VarHandle W_VALUE = waitField("value");
    static final VarHandle W_COND = waitField("cond");
    static final VarHandle W_FLAG_ADDR = waitField("flag_addr");
    static final VarHandle W_FLAG_VALUE = waitField("flag_value");

    private KiTableLayout() {
    }

    /**
     * @param sends send entries
     * @param waits wait entries
     * @return the bytes a table with that many entries takes
     */
    public static long bytes(int sends, int waits) {
        return bytes(sends, waits, 0);
    }

    /**
     * @param sends     send entries
     * @param waits     wait entries
     * @param templates template entries
     * @return the bytes a table with that many entries takes
     */
    public static long bytes(int sends, int waits, int templates) {
        return HEADER.byteSize() + sends * SEND.byteSize() + waits * WAIT.byteSize() + templates * TEMPLATE.byteSize();
    }

    /**
     * @param struct a layout of this class
     * @param field  a field name
     * @return the field's byte offset in the struct
     */
    public static long offsetOf(StructLayout struct, String field) {
        return struct.byteOffset(PathElement.groupElement(field));
    }

    private static VarHandle header(String name) {
        return HEADER.varHandle(PathElement.groupElement(name));
    }

    private static VarHandle send(String name) {
        return SEND.varHandle(PathElement.groupElement(name));
    }

    private static VarHandle waitField(String name) {
        return WAIT.varHandle(PathElement.groupElement(name));
    }

    private static VarHandle template(String name) {
        return TEMPLATE.varHandle(PathElement.groupElement(name));
    }
}

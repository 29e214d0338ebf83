package dev.gdasync.gdsync.ki;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.SendExecutor;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.nic.WqeTemplate;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

// Why this file is long: the table's builder (export of sends, templates and waits, checked before anything is posted)
// and its reader (status, describe) share one binary layout and are kept beside it.
/**
 * A KI descriptor table: prepared sends, templates and waits exported for the threads of a kernel (or
 * the host KI executor), which ring and wait themselves (LibGDSync's {@code gds_mlx5_get_send_info} /
 * {@code gds_mlx5_get_wait_info}, LibMP's {@code mp::mlx5::get_descriptors}).
 *
 * <p>Exporting a send posts it: the table is its executor, so the prepare-order rule applies as for a
 * stream, and the provider is told its doorbell will be rung by a plain store. Exporting a wait posts it
 * too. Nothing is posted until {@link Builder#writeTo} succeeds. The table's executor reports its first
 * failure in the header's status fields; {@link #status()} reads them and {@link #describe} names the
 * failed entry.
 */
public final class KiTable {
    private final MemorySegment segment;
    private final int sends;
    private final int waits;
    private final int templates;
    // What each entry was exported from (requests, word waits), named only when a message needs it.
    private final List<?> sendNames;
    private final List<?> waitNames;
    private final List<?> templateNames;

    private KiTable(MemorySegment segment, int sends, int waits, int templates, List<?> sendNames,
                    List<?> waitNames, List<?> templateNames) {
        this.segment = segment;
        this.sends = sends;
        this.waits = waits;
        this.templates = templates;
        this.sendNames = sendNames;
        this.waitNames = waitNames;
        this.templateNames = templateNames;
    }

    /**
     * A builder for a table whose executor is known only by its address map: the table counts as an
     * executor of its own, so a queue pair's sends in it must be rung before the pair's next sends are
     * posted anywhere else.
     *
     * @param addresses how the table's executor names memory words
     * @return an empty builder
     */
    public static Builder builder(DeviceAddressMap addresses) {
        return new Builder(addresses, null);
    }

    /**
     * A builder for a table that {@code executor} will run: tables of one executor run in launch order, so
     * a queue pair's sends may continue in the executor's next table before these are rung.
     *
     * @param executor the executor
     * @return an empty builder
     */
    public static Builder builder(KiTableExecutor executor) {
        Objects.requireNonNull(executor, "executor");
        return new Builder(executor.addresses(), executor);
    }

    /**
     * Reads a table written by {@link Builder#writeTo}; entries are then named by kind and index only.
     *
     * @param segment the table's memory
     * @return a view of it
     * @throws IllegalArgumentException if the magic, version or sizes do not match this layout
     */
    public static KiTable read(MemorySegment segment) {
        if (segment.byteSize() < KiTableLayout.HEADER.byteSize()) {
            throw new IllegalArgumentException("a KI table needs at least " + KiTableLayout.HEADER.byteSize() + " bytes");
        }
        int magic = (int) KiTableLayout.H_MAGIC.get(segment, 0L);
        if (magic != KiTableLayout.MAGIC) {
            throw new IllegalArgumentException("not a KI table: magic 0x" + Integer.toHexString(magic));
        }
        short version = (short) KiTableLayout.H_VERSION.get(segment, 0L);
        if (version != KiTableLayout.VERSION) {
            throw new IllegalArgumentException("KI table version " + version + ", this library reads " + KiTableLayout.VERSION);
        }
        int sends = (int) KiTableLayout.H_SEND_COUNT.get(segment, 0L);
        int waits = (int) KiTableLayout.H_WAIT_COUNT.get(segment, 0L);
        int templates = (int) KiTableLayout.H_TEMPLATE_COUNT.get(segment, 0L);
        long total = (long) KiTableLayout.H_TOTAL_BYTES.get(segment, 0L);
        long header = KiTableLayout.HEADER.byteSize();
        if (sends < 0 || waits < 0 || templates < 0 || total != KiTableLayout.bytes(sends, waits, templates)
                || total > segment.byteSize()
                || (short) KiTableLayout.H_HEADER_BYTES.get(segment, 0L) != header
                || (int) KiTableLayout.H_SEND_ENTRY_BYTES.get(segment, 0L) != KiTableLayout.SEND.byteSize()
                || (int) KiTableLayout.H_WAIT_ENTRY_BYTES.get(segment, 0L) != KiTableLayout.WAIT.byteSize()
                || (int) KiTableLayout.H_TEMPLATE_ENTRY_BYTES.get(segment, 0L) != KiTableLayout.TEMPLATE.byteSize()
                || (int) KiTableLayout.H_SEND_OFFSET.get(segment, 0L) != header
                || (int) KiTableLayout.H_WAIT_OFFSET.get(segment, 0L) != header + sends * KiTableLayout.SEND.byteSize()
                || (int) KiTableLayout.H_TEMPLATE_OFFSET.get(segment, 0L)
                != header + sends * KiTableLayout.SEND.byteSize() + waits * KiTableLayout.WAIT.byteSize()) {
            throw new IllegalArgumentException("KI table header is inconsistent with its layout or its segment of "
                    + segment.byteSize() + " bytes");
        }
        return new KiTable(segment.asSlice(0, total), sends, waits, templates, null, null, null);
    }

    /** @return the table's memory */
    public MemorySegment segment() {
        return segment;
    }

    /** @return send entries */
    public int sendCount() {
        return sends;
    }

    /** @return wait entries */
    public int waitCount() {
        return waits;
    }

    /** @return template entries */
    public int templateCount() {
        return templates;
    }

    /**
     * @param i entry index
     * @return send entry i
     */
    public SendEntry send(int i) {
        long base = sendBase(i);
        return new SendEntry((long) KiTableLayout.S_DBREC_ADDR.get(segment, base),
                (int) KiTableLayout.S_DBREC_VALUE.get(segment, base),
                (int) KiTableLayout.S_FLAGS.get(segment, base),
                (long) KiTableLayout.S_DB_ADDR.get(segment, base),
                (long) KiTableLayout.S_DB_VALUE.get(segment, base));
    }

    /**
     * @param i entry index
     * @return wait entry i
     */
    public WaitEntry waitEntry(int i) {
        long base = waitBase(i);
        return new WaitEntry((long) KiTableLayout.W_WORD_ADDR.get(segment, base),
                (int) KiTableLayout.W_VALUE.get(segment, base),
                WaitCondition.ofCode((int) KiTableLayout.W_COND.get(segment, base)),
                (long) KiTableLayout.W_FLAG_ADDR.get(segment, base),
                (int) KiTableLayout.W_FLAG_VALUE.get(segment, base));
    }

    /**
     * @param i entry index
     * @return template entry i
     */
    public TemplateEntry template(int i) {
        long base = templateBase(i);
        return new TemplateEntry((long) KiTableLayout.T_WQE_ADDR.get(segment, base),
                (long) KiTableLayout.T_DBREC_ADDR.get(segment, base),
                (int) KiTableLayout.T_DBREC_VALUE.get(segment, base),
                (int) KiTableLayout.T_FLAGS.get(segment, base),
                (long) KiTableLayout.T_DB_ADDR.get(segment, base),
                (long) KiTableLayout.T_DB_VALUE.get(segment, base),
                Short.toUnsignedInt((short) KiTableLayout.T_OFF_SGE_ADDR.get(segment, base)),
                Short.toUnsignedInt((short) KiTableLayout.T_OFF_SGE_LKEY.get(segment, base)),
                Short.toUnsignedInt((short) KiTableLayout.T_OFF_SGE_LENGTH.get(segment, base)),
                Short.toUnsignedInt((short) KiTableLayout.T_OFF_TOTAL_LENGTH.get(segment, base)),
                Short.toUnsignedInt((short) KiTableLayout.T_OFF_REMOTE_ADDR.get(segment, base)),
                Short.toUnsignedInt((short) KiTableLayout.T_OFF_RKEY.get(segment, base)));
    }

    /** @return the executor's report: its first failure, or OK */
    public Status status() {
        return new Status((int) KiTableLayout.H_STATUS_CODE.getVolatile(segment, 0L),
                (int) KiTableLayout.H_STATUS_KIND.getVolatile(segment, 0L),
                (int) KiTableLayout.H_STATUS_INDEX.getVolatile(segment, 0L));
    }

    /**
     * The status code alone, as a wait loop polls it (no allocation): {@link KiTableLayout#STATUS_OK}, a failure's
     * code, or {@link KiTableLayout#STATUS_CLAIMED} while one is being recorded.
     *
     * @return the header's status code, read with volatile semantics
     */
    public int statusCode() {
        return (int) KiTableLayout.H_STATUS_CODE.getVolatile(segment, 0L);
    }

    /**
     * Aborts a running launch from the host: records {@link KiTableLayout#STATUS_ABORTED} (kind
     * {@link KiTableLayout#KIND_NONE}, index 0) unless a failure is recorded already. Every wait of the executor's
     * device API watches the code and ends with it, so its blocks end soon (docs/ki.md, "Host abort"). Any thread.
     *
     * @return whether this call recorded the abort (false: an earlier failure is kept, and ends the launch as well)
     */
    public boolean abort() {
        return report(KiTableLayout.STATUS_ABORTED, KiTableLayout.KIND_NONE, 0);
    }

    /**
     * Records a failure as the table's executor does (the status protocol of {@code docs/ki.md}): claims the
     * status word with a compare-and-swap from OK, stores kind and index, then the code. Only the first
     * failure is kept.
     *
     * @param code  {@link KiTableLayout#STATUS_TIMEOUT}, {@link KiTableLayout#STATUS_INVALID} or
     *              {@link KiTableLayout#STATUS_ABORTED}
     * @param kind  the kind of the failed entry
     * @param index its index
     * @return whether this call recorded the failure (false: an earlier one is kept)
     * @throws IllegalArgumentException if the code is OK or the claim value
     */
    public boolean report(int code, int kind, int index) {
        if (code == KiTableLayout.STATUS_OK || code == KiTableLayout.STATUS_CLAIMED) {
            throw new IllegalArgumentException("a KI failure needs a failure code, got " + code);
        }
        if (!KiTableLayout.H_STATUS_CODE.compareAndSet(segment, 0L, KiTableLayout.STATUS_OK, KiTableLayout.STATUS_CLAIMED)) {
            return false;
        }
        KiTableLayout.H_STATUS_KIND.setVolatile(segment, 0L, kind);
        KiTableLayout.H_STATUS_INDEX.setVolatile(segment, 0L, index);
        KiTableLayout.H_STATUS_CODE.setVolatile(segment, 0L, code);
        return true;
    }

    /**
     * What an executor does as it starts a launch over the table: clears an earlier launch's failure, but keeps a
     * host abort ({@link #abort()}), recorded or being recorded, so that an abort that came between preparing a
     * launch and starting it ends the launch at its first wait rather than being lost. Nothing else writes the
     * status while no launch runs over the table, but the host's abort may come at any moment.
     */
    public void clearStatusForLaunch() {
        int code = statusCode();
        if (code == KiTableLayout.STATUS_OK || code == KiTableLayout.STATUS_ABORTED
                || code == KiTableLayout.STATUS_CLAIMED) {
            return;
        }
        KiTableLayout.H_STATUS_KIND.setVolatile(segment, 0L, KiTableLayout.KIND_NONE);
        KiTableLayout.H_STATUS_INDEX.setVolatile(segment, 0L, 0);
        KiTableLayout.H_STATUS_CODE.compareAndSet(segment, 0L, code, KiTableLayout.STATUS_OK);
    }

    /** Clears the status fields before a new launch over the same table, a host abort's too. */
    public void clearStatus() {
        KiTableLayout.H_STATUS_KIND.setVolatile(segment, 0L, KiTableLayout.KIND_NONE);
        KiTableLayout.H_STATUS_INDEX.setVolatile(segment, 0L, 0);
        KiTableLayout.H_STATUS_CODE.setVolatile(segment, 0L, KiTableLayout.STATUS_OK);
    }

    /**
     * Names an entry: what it was exported from (a queue pair's send, a completion queue's CQE, a word),
     * or its kind and index for a table read back from memory.
     *
     * @param kind  {@link KiTableLayout#KIND_SEND}, {@link KiTableLayout#KIND_WAIT} or {@link KiTableLayout#KIND_TEMPLATE}
     * @param index the entry index
     * @return a description for messages
     */
    public String describe(int kind, int index) {
        List<?> names = switch (kind) {
            case KiTableLayout.KIND_SEND -> sendNames;
            case KiTableLayout.KIND_WAIT -> waitNames;
            case KiTableLayout.KIND_TEMPLATE -> templateNames;
            default -> null;
        };
        String what = switch (kind) {
            case KiTableLayout.KIND_SEND -> "send entry " + index;
            case KiTableLayout.KIND_WAIT -> "wait entry " + index;
            case KiTableLayout.KIND_TEMPLATE -> "template entry " + index;
            case KiTableLayout.KIND_BARRIER -> "the exchange template's barrier";
            case KiTableLayout.KIND_NONE -> "no entry (the host, or the kernel's own state)";
            default -> "entry " + index + " of unknown kind " + kind;
        };
        return names != null && index >= 0 && index < names.size() ? what + " (" + Builder.name(names.get(index)) + ")" : what;
    }

    private long sendBase(int i) {
        Objects.checkIndex(i, sends);
        return KiTableLayout.HEADER.byteSize() + i * KiTableLayout.SEND.byteSize();
    }

    private long waitBase(int i) {
        Objects.checkIndex(i, waits);
        return KiTableLayout.HEADER.byteSize() + sends * KiTableLayout.SEND.byteSize() + i * KiTableLayout.WAIT.byteSize();
    }

    private long templateBase(int i) {
        Objects.checkIndex(i, templates);
        return KiTableLayout.HEADER.byteSize() + sends * KiTableLayout.SEND.byteSize() + waits * KiTableLayout.WAIT.byteSize()
                + i * KiTableLayout.TEMPLATE.byteSize();
    }

    /**
     * A send entry: store {@code dbrecValue} at {@code dbrecAddress}, fence, store {@code doorbellValue}
     * at {@code doorbellAddress}.
     *
     * @param dbrecAddress    the doorbell record
     * @param dbrecValue      its new value
     * @param flags           {@link KiTableLayout#SEND_SIGNALED}, {@link KiTableLayout#SEND_FENCE_SYSTEM}
     * @param doorbellAddress the doorbell
     * @param doorbellValue   the value to ring it with
     */
    public record SendEntry(long dbrecAddress, int dbrecValue, int flags, long doorbellAddress, long doorbellValue) {
    }

    /**
     * A wait entry: wait until the word satisfies the condition, then (if {@code flagAddress != 0})
     * store {@code flagValue} at {@code flagAddress} to release the CQE to the CPU.
     *
     * @param wordAddress the word
     * @param value       the operand
     * @param condition   the condition
     * @param flagAddress the release word, or 0 for a plain word wait
     * @param flagValue   the release value
     */
    public record WaitEntry(long wordAddress, int value, WaitCondition condition, long flagAddress, int flagValue) {
    }

    /**
     * A template entry: patch the work request at {@code wqeAddress} (fields at the given offsets), fence,
     * then ring as a send entry does.
     *
     * @param wqeAddress       the work request in the send queue
     * @param dbrecAddress     the doorbell record
     * @param dbrecValue       its new value
     * @param flags            as a send entry's
     * @param doorbellAddress  the doorbell
     * @param doorbellValue    the value to ring it with
     * @param offSgeAddress    offset of the local buffer address (u64)
     * @param offSgeLkey       offset of the local buffer lkey (u64)
     * @param offSgeLength     offset of the local buffer length (u32)
     * @param offTotalLength   offset of the message length (u32)
     * @param offRemoteAddress offset of the remote address (u64)
     * @param offRkey          offset of the rkey (u64)
     */
    public record TemplateEntry(long wqeAddress, long dbrecAddress, int dbrecValue, int flags, long doorbellAddress,
                                long doorbellValue, int offSgeAddress, int offSgeLkey, int offSgeLength, int offTotalLength,
                                int offRemoteAddress, int offRkey) {
    }

    /**
     * The executor's report.
     *
     * @param code  {@link KiTableLayout#STATUS_OK}, {@link KiTableLayout#STATUS_TIMEOUT}, {@link KiTableLayout#STATUS_INVALID}
     *              or {@link KiTableLayout#STATUS_ABORTED} (the host aborted the launch)
     * @param kind  the kind of the failed entry
     * @param index the failed entry's index
     */
    public record Status(int code, int kind, int index) {
        /** @return whether the executor reported no failure */
        public boolean isOk() {
            return code == KiTableLayout.STATUS_OK;
        }
    }

    /** Collects entries, then writes the table and posts what it exports. */
    public static final class Builder {
        private final DeviceAddressMap addresses;
        private final List<SendRequest> sends = new ArrayList<>();
        private final List<SendRequest> templates = new ArrayList<>();
        private final List<WqeTemplate> templateFields = new ArrayList<>();
        private final List<Object> waits = new ArrayList<>();
        private final Map<QueuePair, Integer> sendsPerQp = new IdentityHashMap<>();
        private final Map<WaitRequest, Boolean> waitRequests = new IdentityHashMap<>();
        /** The table's executor; a table whose executor is known only by its address map is its own. */
        private final SendExecutor executor;
        private final boolean announceRings;
        private boolean written;

        private Builder(DeviceAddressMap addresses, KiTableExecutor executor) {
            this.addresses = Objects.requireNonNull(addresses, "addresses");
            Builder self = this; // captured, so that every table is an executor of its own
            this.executor = executor != null ? executor : () -> self.toString();
            this.announceRings = executor == null || !executor.progressesOwnRings();
        }

        /**
         * Adds a prepared send; it must be the next of its queue pair in prepare order (templates count).
         *
         * @param request the send
         * @return its entry index
         * @throws IllegalStateException if it is already posted or out of prepare order
         */
        public int addSend(SendRequest request) {
            requireOpen();
            checkOrder(request);
            sends.add(request);
            return sends.size() - 1;
        }

        /**
         * Adds a prepared send whose buffer, length and remote target the kernel sets before ringing it.
         *
         * @param request the send; one buffer, not INLINE
         * @return its template entry index
         * @throws IllegalStateException if it is already posted, out of prepare order, or cannot be a template
         */
        public int addTemplate(SendRequest request) {
            requireOpen();
            WqeTemplate fields = request.template();
            checkOrder(request);
            templates.add(request);
            templateFields.add(fields);
            return templates.size() - 1;
        }

        private void checkOrder(SendRequest request) {
            QueuePair qp = request.queuePair();
            int earlier = sendsPerQp.getOrDefault(qp, 0);
            request.checkPost(earlier, executor);
            sendsPerQp.put(qp, earlier + 1);
        }

        /**
         * Adds a prepared CQE wait.
         *
         * @param request the wait
         * @return its entry index
         * @throws IllegalStateException if it is already posted or already in this table
         */
        public int addWait(WaitRequest request) {
            requireOpen();
            request.checkPost();
            if (waitRequests.put(request, Boolean.TRUE) != null) {
                throw new IllegalStateException(request + " is already in this table");
            }
            waits.add(request);
            return waits.size() - 1;
        }

        /**
         * Adds a wait on a plain 32-bit word (a ready flag, LibMP's {@code isem32}), with no release.
         *
         * @param word      the word
         * @param value     the operand
         * @param condition the condition
         * @return its entry index
         */
        public int addWordWait(MemoryWord word, int value, WaitCondition condition) {
            requireOpen();
            Objects.requireNonNull(condition, "condition");
            if (word.width() != 4) {
                throw new IllegalArgumentException("a KI word wait needs a 32-bit word, got " + word);
            }
            waits.add(new WordWait(word, value, condition));
            return waits.size() - 1;
        }

        /** @return the bytes the table will take */
        public long byteSize() {
            return KiTableLayout.bytes(sends.size(), waits.size(), templates.size());
        }

        /**
         * Writes the table at the start of a segment and posts every exported send, template and wait.
         *
         * @param dest device-visible memory, at least {@link #byteSize()} bytes, 8-byte aligned
         * @return the table
         * @throws IllegalArgumentException if the segment is too small or misaligned, or an address is not
         *                                  visible to the executor; nothing is posted then
         */
        public KiTable writeTo(MemorySegment dest) {
            requireOpen();
            long size = byteSize();
            if (dest.byteSize() < size) {
                throw new IllegalArgumentException("the KI table needs " + size + " bytes, the segment has " + dest.byteSize());
            }
            if ((dest.address() & 7) != 0) {
                throw new IllegalArgumentException("the KI table must be 8-byte aligned, got 0x" + Long.toHexString(dest.address()));
            }
            // Resolve every address first: a word the executor cannot see fails before anything is written.
            long[][] sendAddr = new long[sends.size()][];
            for (int i = 0; i < sends.size(); i++) {
                SendRequest r = sends.get(i);
                sendAddr[i] = new long[] {addresses.addressOf(r.doorbellRecord()), addresses.addressOf(r.doorbell())};
            }
            long[][] templateAddr = new long[templates.size()][];
            for (int i = 0; i < templates.size(); i++) {
                SendRequest r = templates.get(i);
                templateAddr[i] = new long[] {addresses.addressOf(templateFields.get(i).entry()),
                    addresses.addressOf(r.doorbellRecord()), addresses.addressOf(r.doorbell())};
            }
            long[][] waitAddr = new long[waits.size()][];
            for (int i = 0; i < waits.size(); i++) {
                Object w = waits.get(i);
                waitAddr[i] = w instanceof WaitRequest r
                        ? new long[] {addresses.addressOf(r.word()), addresses.addressOf(r.releaseWord())}
                        : new long[] {addresses.addressOf(((WordWait) w).word()), 0};
            }
            MemorySegment t = dest.asSlice(0, size);
            t.fill((byte) 0);
            writeHeader(t, size);
            long header = KiTableLayout.HEADER.byteSize();
            for (int i = 0; i < sends.size(); i++) {
                SendRequest r = sends.get(i);
                long base = header + i * KiTableLayout.SEND.byteSize();
                KiTableLayout.S_DBREC_ADDR.set(t, base, sendAddr[i][0]);
                KiTableLayout.S_DBREC_VALUE.set(t, base, r.doorbellRecordValue());
                KiTableLayout.S_FLAGS.set(t, base, flags(r));
                KiTableLayout.S_DB_ADDR.set(t, base, sendAddr[i][1]);
                KiTableLayout.S_DB_VALUE.set(t, base, r.doorbellValue());
            }
            long waitBase = header + sends.size() * KiTableLayout.SEND.byteSize();
            for (int i = 0; i < waits.size(); i++) {
                long base = waitBase + i * KiTableLayout.WAIT.byteSize();
                Object w = waits.get(i);
                if (w instanceof WaitRequest r) {
                    KiTableLayout.W_VALUE.set(t, base, r.value());
                    KiTableLayout.W_COND.set(t, base, r.condition().code());
                    KiTableLayout.W_FLAG_VALUE.set(t, base, r.releaseValue());
                } else {
                    WordWait ww = (WordWait) w;
                    KiTableLayout.W_VALUE.set(t, base, ww.value());
                    KiTableLayout.W_COND.set(t, base, ww.condition().code());
                }
                KiTableLayout.W_WORD_ADDR.set(t, base, waitAddr[i][0]);
                KiTableLayout.W_FLAG_ADDR.set(t, base, waitAddr[i][1]);
            }
            long templateBase = waitBase + waits.size() * KiTableLayout.WAIT.byteSize();
            for (int i = 0; i < templates.size(); i++) {
                SendRequest r = templates.get(i);
                WqeTemplate f = templateFields.get(i);
                long base = templateBase + i * KiTableLayout.TEMPLATE.byteSize();
                KiTableLayout.T_WQE_ADDR.set(t, base, templateAddr[i][0]);
                KiTableLayout.T_DBREC_ADDR.set(t, base, templateAddr[i][1]);
                KiTableLayout.T_DBREC_VALUE.set(t, base, r.doorbellRecordValue());
                KiTableLayout.T_FLAGS.set(t, base, flags(r)
                        | (f.encoding() == WqeTemplate.Encoding.MLX5 ? KiTableLayout.TEMPLATE_MLX5 : 0));
                KiTableLayout.T_DB_ADDR.set(t, base, templateAddr[i][2]);
                KiTableLayout.T_DB_VALUE.set(t, base, r.doorbellValue());
                KiTableLayout.T_OFF_SGE_ADDR.set(t, base, (short) f.offSgeAddress());
                KiTableLayout.T_OFF_SGE_LKEY.set(t, base, (short) f.offSgeLkey());
                KiTableLayout.T_OFF_SGE_LENGTH.set(t, base, (short) f.offSgeLength());
                KiTableLayout.T_OFF_TOTAL_LENGTH.set(t, base, (short) f.offTotalLength());
                KiTableLayout.T_OFF_REMOTE_ADDR.set(t, base, (short) f.offRemoteAddress());
                KiTableLayout.T_OFF_RKEY.set(t, base, (short) f.offRkey());
            }
            for (SendRequest r : sends) {
                r.markPosted(executor);
                if (announceRings) {
                    r.expectPlainStoreRing();
                }
            }
            for (SendRequest r : templates) {
                r.markPosted(executor);
                if (announceRings) {
                    r.expectPlainStoreRing();
                }
            }
            for (Object w : waits) {
                if (w instanceof WaitRequest r) {
                    r.markPosted();
                    if (announceRings) {
                        r.expectExternalWait();
                    }
                }
            }
            written = true;
            return new KiTable(t, sends.size(), waits.size(), templates.size(), List.copyOf(sends), List.copyOf(waits),
                    List.copyOf(templates));
        }

        private void writeHeader(MemorySegment t, long size) {
            long header = KiTableLayout.HEADER.byteSize();
            long waitOffset = header + sends.size() * KiTableLayout.SEND.byteSize();
            KiTableLayout.H_MAGIC.set(t, 0L, KiTableLayout.MAGIC);
            KiTableLayout.H_VERSION.set(t, 0L, KiTableLayout.VERSION);
            KiTableLayout.H_HEADER_BYTES.set(t, 0L, (short) header);
            KiTableLayout.H_SEND_COUNT.set(t, 0L, sends.size());
            KiTableLayout.H_WAIT_COUNT.set(t, 0L, waits.size());
            KiTableLayout.H_TEMPLATE_COUNT.set(t, 0L, templates.size());
            KiTableLayout.H_SEND_OFFSET.set(t, 0L, (int) header);
            KiTableLayout.H_WAIT_OFFSET.set(t, 0L, (int) waitOffset);
            KiTableLayout.H_TEMPLATE_OFFSET.set(t, 0L, (int) (waitOffset + waits.size() * KiTableLayout.WAIT.byteSize()));
            KiTableLayout.H_SEND_ENTRY_BYTES.set(t, 0L, (int) KiTableLayout.SEND.byteSize());
            KiTableLayout.H_WAIT_ENTRY_BYTES.set(t, 0L, (int) KiTableLayout.WAIT.byteSize());
            KiTableLayout.H_TEMPLATE_ENTRY_BYTES.set(t, 0L, (int) KiTableLayout.TEMPLATE.byteSize());
            KiTableLayout.H_TOTAL_BYTES.set(t, 0L, size);
        }

        private static int flags(SendRequest r) {
            return KiTableLayout.SEND_FENCE_SYSTEM | (r.signaled() ? KiTableLayout.SEND_SIGNALED : 0);
        }

        private static String name(Object source) {
            return switch (source) {
                case SendRequest r -> "send #" + r.sequence() + " of queue pair " + r.queuePair().number();
                case WaitRequest r -> "CQE #" + r.index() + " of " + r.completionQueue().name();
                case WordWait w -> w.word().name() + " " + w.condition() + " " + w.value();
                default -> String.valueOf(source);
            };
        }

        private void requireOpen() {
            if (written) {
                throw new IllegalStateException("this KI table was already written; start a new builder");
            }
        }

        @Override
        public String toString() {
            return "KI table builder (" + sends.size() + " sends, " + templates.size() + " templates, " + waits.size() + " waits)";
        }
    }

    private record WordWait(MemoryWord word, int value, WaitCondition condition) {
    }
}

package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableExecutor;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.gdsync.ki.ShmemKiLayout;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.libmp.JobFailureSubscription;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.MpKiExport;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One prepared launch of the KI model (the device API of {@code shmem.cuh}): the send-queue slots toward every
 * other PE, pre-filled by the CPU as templated RDMA writes (opcode, flags, queue pair and completion are static; a
 * kernel thread writes the addresses, keys and length and rings), exported as the template and wait entries of a
 * KI table, and the state a kernel's contexts (one per block) share. Made by {@link Shmem#kiPrepare}; launch a
 * kernel over {@link #table()} and {@link #state()} (on the host KI executor: {@code HostKiExecutor.shmem}), join it,
 * then {@link #complete()}.
 *
 * <p>While it is prepared the runtime refuses other calls: the CPU's own posts would ring the queue pairs past
 * slots the kernel has not patched yet.
 *
 * <p>A peer's death: from preparation to {@link #complete()} a listener of the Mp's job failure aborts the launch
 * through its table ({@link KiTable#abort()}: the status word's {@code GDS_KI_ABORTED}), which every wait of the
 * device API watches, so the kernel's blocks end within moments rather than by their timeout, and
 * {@link #complete()} reports the job's failure, naming the rank (docs/shmem.md, docs/ki.md "Host abort").
 */
public final class ShmemKi implements AutoCloseable {
    /**
     * Per-launch memory (staging, table, state) is allocated in whole units of 64 KiB, a multiple of every page size,
     * so that a GPU's address map can unregister all of its pages when it is freed ({@link DeviceAddressMap#forget}
     * leaves alone a page it cannot tell is the allocation's own).
     */
    private static final long UNIT = 64 * 1024;
    private final Shmem shmem;
    private final Mp mp;
    private final int blocks;
    private final int slotsPerPe;
    private final MemorySegment staging;
    private final MpRegistration stagingReg;
    private final MpRegistration heapReg;
    private final MemorySegment tableMemory;
    private final MemorySegment state;
    private final KiTable table;
    private final DeviceAddressMap addresses;
    private final List<MpRequest> requests = new ArrayList<>();
    /** Aborts the launch when the job fails; closed by {@link #complete()}. */
    private final JobFailureSubscription abortOnJobFailure;
    private boolean completed;

    ShmemKi(Shmem shmem, MemorySegment heapMemory, MpWindow window, KiTableExecutor executor, int blocks, int slotsPerPe,
            long timeoutNs) {
        this.shmem = shmem;
        this.mp = shmem.mp();
        this.blocks = blocks;
        this.slotsPerPe = slotsPerPe;
        this.addresses = executor.addresses();
        int n = shmem.nPes();
        int me = shmem.myPe();
        int slots = (n - 1) * slotsPerPe;
        List<AutoCloseable> undo = new ArrayList<>();
        try {
            this.staging = mp.allocate(units(8L * Math.max(1, slots)));
            undo.add(() -> mp.free(staging));
            this.stagingReg = mp.register(staging);
            undo.add(() -> mp.deregister(stagingReg));
            this.heapReg = mp.register(heapMemory);
            undo.add(() -> mp.deregister(heapReg));
            MpKiExport export = mp.kiExport(executor);
            // Slots of PE p: entries [first(p), first(p) + slotsPerPe), template j and wait j the same request.
            for (int p = 0; p < n; p++) {
                if (p == me) {
                    continue;
                }
                for (int s = 0; s < slotsPerPe; s++) {
                    int j = requests.size();
                    MpRequest r = mp.putPrepare(staging.asSlice(8L * j, 8), stagingReg, p, 0, window, 0);
                    requests.add(r);
                    export.addTemplate(r);
                    export.addWait(r);
                }
            }
            this.tableMemory = mp.allocate(units(export.byteSize()));
            undo.add(() -> mp.free(tableMemory));
            this.state = mp.allocate(units(ShmemKiLayout.bytes(n, blocks)));
            undo.add(() -> mp.free(state));
            this.table = export.writeTo(tableMemory);
            undo.clear(); // posted: from here complete() reaps them
            writeState(addresses, heapMemory, window, me, n, timeoutNs);
            KiTable t = table;
            this.abortOnJobFailure = mp.onJobFailure(reason -> t.abort());
        } catch (RuntimeException e) {
            for (int i = undo.size() - 1; i >= 0; i--) {
                try {
                    undo.get(i).close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            // Slots already prepared stay in their queue pairs: Shmem.kiPrepare checked every limit first, so only a
            // failure of the machine itself (memory) gets here.
            throw e;
        }
    }

    private void writeState(DeviceAddressMap map, MemorySegment heapMemory, MpWindow window, int me, int n,
                            long timeoutNs) {
        MemorySegment s = state;
        long pes = ShmemKiLayout.STATE.byteSize();
        s.set(JAVA_LONG, ShmemKiLayout.S_TABLE, address(map, tableMemory));
        s.set(JAVA_LONG, ShmemKiLayout.S_HEAP, address(map, heapMemory));
        s.set(JAVA_LONG, ShmemKiLayout.S_HEAP_NIC, heapMemory.address());
        s.set(JAVA_LONG, ShmemKiLayout.S_HEAP_BYTES, heapMemory.byteSize());
        s.set(JAVA_LONG, ShmemKiLayout.S_HEAP_LKEY, heapReg.lkey());
        s.set(JAVA_LONG, ShmemKiLayout.S_STAGING, address(map, staging));
        s.set(JAVA_LONG, ShmemKiLayout.S_STAGING_NIC, staging.address());
        s.set(JAVA_LONG, ShmemKiLayout.S_STAGING_LKEY, stagingReg.lkey());
        s.set(JAVA_LONG, ShmemKiLayout.S_TIMEOUT_NS, timeoutNs);
        s.set(JAVA_INT, ShmemKiLayout.S_MY_PE, me);
        s.set(JAVA_INT, ShmemKiLayout.S_N_PES, n);
        s.set(JAVA_INT, ShmemKiLayout.S_BLOCKS, blocks);
        s.set(JAVA_LONG, ShmemKiLayout.S_PES, address(map, s) + pes);
        s.set(JAVA_LONG, ShmemKiLayout.S_LAST, address(map, s) + pes + n * ShmemKiLayout.PE.byteSize());
        s.set(JAVA_INT, ShmemKiLayout.S_MAGIC, ShmemKiLayout.MAGIC);
        s.set(JAVA_INT, ShmemKiLayout.S_VERSION, ShmemKiLayout.VERSION);
        int first = 0;
        for (int p = 0; p < n; p++) {
            long r = pes + p * ShmemKiLayout.PE.byteSize();
            MemorySegment mapped = p == me ? null : window.peerMemory(p);
            s.set(JAVA_LONG, r + ShmemKiLayout.P_HEAP_NIC, window.remoteAddress(p));
            s.set(JAVA_LONG, r + ShmemKiLayout.P_RKEY, window.rkey(p));
            s.set(JAVA_LONG, r + ShmemKiLayout.P_MAPPED, mapped == null ? 0 : address(map, mapped));
            s.set(JAVA_INT, r + ShmemKiLayout.P_FIRST, first);
            s.set(JAVA_INT, r + ShmemKiLayout.P_COUNT, p == me ? 0 : slotsPerPe);
            first += p == me ? 0 : slotsPerPe;
        }
    }

    private static long units(long bytes) {
        return (bytes + UNIT - 1) / UNIT * UNIT;
    }

    /** @return how the executor addresses a segment's first byte */
    private static long address(DeviceAddressMap map, MemorySegment m) {
        return map.addressOf(MemoryWord.word32(m, 0, "shmem KI memory"));
    }

    /** @return the KI table: slot j is template entry j and wait entry j (its completion) */
    public KiTable table() {
        return table;
    }

    /** @return the state the launch's blocks share (pass it to the kernel: {@code gds_shmem_state *}) */
    public MemorySegment state() {
        return state;
    }

    /** @return the contexts prepared: launch exactly this many blocks */
    public int blocks() {
        return blocks;
    }

    /** @return the slots toward each other PE: a launch may ring at most this many puts, p and SET signals to one PE */
    public int slotsPerPe() {
        return slotsPerPe;
    }

    /**
     * Ends the launch on the CPU, after the kernel was joined: reaps every slot's request (the last block released
     * their completions), frees the slots, and lets the runtime take other calls again. Completing twice does
     * nothing.
     *
     * @throws MpException if a slot's request failed or never completed within the wait timeout (a kernel that did
     *                     not end its blocks), the kernel recorded a failure in the table's status, or the job failed
     *                     while the launch was prepared (the message gives the job's failure, naming the rank)
     */
    public void complete() {
        if (completed) {
            return;
        }
        completed = true;
        abortOnJobFailure.close();
        RuntimeException first = null;
        try {
            for (MpRequest r : requests) {
                try {
                    mp.wait(r);
                } catch (RuntimeException e) {
                    first = e;
                    break; // the queue pair is in error or the kernel never rang: the rest cannot complete either
                }
            }
            KiTable.Status status = table.status();
            String jobFailure = mp.failure();
            if (first == null && status.code() == KiTableLayout.STATUS_ABORTED) {
                first = new MpException("PE " + shmem.myPe() + ": the shmem kernel was aborted: "
                        + (jobFailure != null ? "the job failed: " + jobFailure : "its table's status says so (the host)"),
                        null, jobFailure != null ? ErrorDetail.JOB_FAILED : null);
            } else if (first == null && !status.isOk()) {
                first = new MpException("PE " + shmem.myPe() + ": the shmem kernel failed: " + table.describe(status.kind(),
                        status.index()) + " (code " + status.code() + ")", null, null);
            }
        } finally {
            // A GPU executor registered these with the driver: unregister them before they are freed, so that memory
            // allocated later at the same addresses is not reached through the old pinned pages.
            addresses.forget(staging);
            addresses.forget(tableMemory);
            addresses.forget(state);
            mp.deregister(heapReg);
            mp.deregister(stagingReg);
            mp.free(staging);
            mp.free(tableMemory);
            mp.free(state);
            shmem.kiEnded(this);
        }
        if (first != null) {
            throw first;
        }
    }

    /** Same as {@link #complete()}. */
    @Override
    public void close() {
        complete();
    }
}

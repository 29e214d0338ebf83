package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.nic.Access;

/**
 * The one access check of the software NIC (DESIGN.md §6): every key, bound and access flag of every request,
 * local and remote, on every transport and memory kind, is decided here, with one set of refusals. Executors
 * resolve keys (this NIC's table, or a peer's as mapped here) and ask before a byte moves; a refusal ends the
 * request with its {@link Refusal} and nothing outside a checked range is touched.
 *
 * <p>The only difference between transports is whether they carry device memory: the shared-memory transport
 * moves it with CUDA copies, the UCX transport carries host memory only.
 */
public final class AccessChecker {
    /** For transports that move device memory (shared memory: CUDA copies and CUDA IPC). */
    public static final AccessChecker WITH_DEVICE_MEMORY = new AccessChecker(true);
    /** For transports that carry host memory only (UCX). */
    public static final AccessChecker HOST_MEMORY_ONLY = new AccessChecker(false);

    private final boolean carriesDevice;

    private AccessChecker(boolean carriesDevice) {
        this.carriesDevice = carriesDevice;
    }

    /** @return whether the transport moves device memory */
    public boolean carriesDevice() {
        return carriesDevice;
    }

    /**
     * A local buffer of a request, named by one of this NIC's lkeys.
     *
     * @param mr        what the lkey resolved to, or null
     * @param address   the buffer's first byte
     * @param length    its length
     * @param nicWrites whether the NIC writes it (a READ's destination, an atomic's result)
     * @return why it is refused, or null
     */
    public Refusal local(KeyedRange mr, long address, long length, boolean nicWrites) {
        if (mr == null) {
            return Refusal.BAD_LKEY;
        }
        if (!mr.contains(address, length)) {
            return Refusal.LOCAL_OUT_OF_BOUNDS;
        }
        if (nicWrites && (mr.access() & Access.LOCAL_WRITE) == 0) {
            return Refusal.LOCAL_ACCESS_DENIED;
        }
        if (mr.device() != null && !carriesDevice) {
            return Refusal.LOCAL_DEVICE_NOT_CARRIED;
        }
        return null;
    }

    /**
     * The local buffer that receives an atomic's original value, already accepted by {@link #local}: the NIC
     * writes it with a CPU atomic, so it must be host memory.
     *
     * @param mr the buffer's registration
     * @return why it is refused, or null
     */
    public Refusal atomicResult(KeyedRange mr) {
        return mr.device() != null ? Refusal.LOCAL_DEVICE_ATOMIC : null;
    }

    /**
     * A receive buffer the target posted (what a SEND fills), named by the target's lkey.
     *
     * @param mr      what the lkey resolved to, or null
     * @param address the buffer's first byte
     * @param length  its length
     * @return why it is refused, or null
     */
    public Refusal receiveBuffer(KeyedRange mr, long address, long length) {
        if (mr == null) {
            return Refusal.RECV_BUFFER_INVALID;
        }
        DeviceMemory device = mr.device();
        if (device != null && !carriesDevice) {
            return Refusal.RECV_DEVICE_NOT_CARRIED;
        }
        if (device == DeviceMemory.UNREACHABLE) {
            return Refusal.RECV_DEVICE_UNREACHABLE;
        }
        if ((mr.access() & Access.LOCAL_WRITE) == 0 || !mr.contains(address, length)) {
            return Refusal.RECV_BUFFER_INVALID;
        }
        return null;
    }

    /**
     * A remote range named by the target's rkey: a WRITE's destination, a READ's source or an atomic's target.
     *
     * @param mr      what the rkey resolved to, or null
     * @param address the range's first byte
     * @param bytes   its length (8 for atomics)
     * @param needed  {@link Access#REMOTE_WRITE}, {@link Access#REMOTE_READ} or {@link Access#REMOTE_ATOMIC}
     * @return why it is refused, or null
     */
    public Refusal remote(KeyedRange mr, long address, long bytes, int needed) {
        boolean atomic = needed == Access.REMOTE_ATOMIC;
        if (mr == null) {
            return Refusal.BAD_RKEY;
        }
        DeviceMemory device = mr.device();
        if (device != null && !carriesDevice) {
            return atomic ? Refusal.ATOMIC_DEVICE_NOT_CARRIED : Refusal.REMOTE_DEVICE_NOT_CARRIED;
        }
        if (device == DeviceMemory.UNREACHABLE) {
            return Refusal.REMOTE_DEVICE_UNREACHABLE;
        }
        if ((mr.access() & needed) != needed) {
            return Refusal.REMOTE_ACCESS_DENIED;
        }
        if (!mr.contains(address, bytes)) {
            return Refusal.REMOTE_OUT_OF_BOUNDS;
        }
        if (atomic) {
            if (device != null) {
                return Refusal.DEVICE_ATOMIC;
            }
            // Both the address the peer named and the word as mapped here: a CPU atomic needs natural alignment.
            if ((address & 7) != 0 || ((mr.hostMemory().address() + mr.hostOffset(address)) & 7) != 0) {
                return Refusal.REMOTE_MISALIGNED;
            }
        }
        return null;
    }
}

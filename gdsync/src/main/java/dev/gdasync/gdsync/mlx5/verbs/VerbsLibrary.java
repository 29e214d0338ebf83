package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.ffm.Downcalls;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Optional;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * rdma-core's verbs library ({@value #IBVERBS}) and its mlx5 provider ({@value #MLX5}, for the direct-verbs call
 * {@code mlx5dv_init_obj}) through FFM downcalls: looked up and bound once per JVM, on first use ({@link #get()}),
 * never when a class loads.
 *
 * <p>Every binding is of an exported symbol, at the version the dynamic linker picks by default (the newest:
 * {@code ibv_reg_mr@@IBVERBS_1.1}, {@code mlx5dv_init_obj@@MLX5_1.2}). Two verbs are static inline wrappers in
 * {@code verbs.h} around the exported function of the same name:
 * <ul>
 * <li>{@code ibv_reg_mr} is a macro that calls the exported {@code ibv_reg_mr} when the access flags hold no
 * optional bit ({@code IBV_ACCESS_OPTIONAL_RANGE}), and {@code ibv_reg_mr_iova2} otherwise. The project's access
 * flags ({@link dev.gdasync.gdsync.nic.Access}) are the four basic bits, so the exported call is what the macro
 * would call.</li>
 * <li>{@code ibv_query_port} is a macro that calls the provider's extended query with the caller's structure size,
 * or falls back to the exported {@code ibv_query_port}, which takes the old structure and writes the library's own
 * {@code ibv_port_attr}. The bindings take the fallback: a zeroed buffer of {@link VerbsLayouts#PORT_ATTR_ROOM}
 * bytes, room for whatever a newer library appends.</li>
 * </ul>
 *
 * <p>Calls that fail report errno: the handles capture it ({@link Linker.Option#captureCallState}) into a segment the
 * caller passes first ({@link #errnoSlot}).
 */
@SuppressWarnings("restricted") // loading rdma-core and binding its functions are native operations by design
final class VerbsLibrary {
    /** The verbs library's soname. */
    static final String IBVERBS = "libibverbs.so.1";
    /** The mlx5 provider's soname, which exports the direct verbs. */
    static final String MLX5 = "libmlx5.so.1";

    /** The verbs functions bound from {@link #IBVERBS}. */
    static final List<String> IBVERBS_FUNCTIONS = List.of("ibv_get_device_list", "ibv_free_device_list",
            "ibv_get_device_name", "ibv_open_device", "ibv_close_device", "ibv_query_device", "ibv_query_port",
            "ibv_query_gid", "ibv_alloc_pd", "ibv_dealloc_pd", "ibv_reg_mr", "ibv_reg_dmabuf_mr", "ibv_dereg_mr",
            "ibv_create_cq", "ibv_destroy_cq", "ibv_create_qp", "ibv_modify_qp", "ibv_destroy_qp");
    /** The direct-verbs functions bound from {@link #MLX5}. */
    static final List<String> MLX5_FUNCTIONS = List.of("mlx5dv_init_obj", "mlx5dv_is_supported");

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_VALUE = CALL_STATE.varHandle(groupElement("errno"));

    private final MethodHandle getDeviceList;
    private final MethodHandle freeDeviceList;
    private final MethodHandle getDeviceName;
    private final MethodHandle openDevice;
    private final MethodHandle closeDevice;
    private final MethodHandle queryDevice;
    private final MethodHandle queryPort;
    private final MethodHandle queryGid;
    private final MethodHandle allocPd;
    private final MethodHandle deallocPd;
    private final MethodHandle regMr;
    private final MethodHandle regDmabufMr;
    private final MethodHandle deregMr;
    private final MethodHandle createCq;
    private final MethodHandle destroyCq;
    private final MethodHandle createQp;
    private final MethodHandle modifyQp;
    private final MethodHandle destroyQp;
    private final MethodHandle initObj;
    private final MethodHandle isSupported;
    private final int pageSize;

    private VerbsLibrary(SymbolLookup ibverbs, SymbolLookup mlx5) {
        getDeviceList = bind(ibverbs, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
        freeDeviceList = bind(ibverbs, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS), false);
        getDeviceName = bind(ibverbs, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS), false);
        openDevice = bind(ibverbs, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
        closeDevice = bind(ibverbs, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
        queryDevice = bind(ibverbs, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
        queryPort = bind(ibverbs, "ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS), true);
        queryGid = bind(ibverbs, "ibv_query_gid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS),
                true);
        allocPd = bind(ibverbs, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
        deallocPd = bind(ibverbs, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
        regMr = bind(ibverbs, "ibv_reg_mr", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), true);
        regDmabufMr = bind(ibverbs, "ibv_reg_dmabuf_mr",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT), true);
        deregMr = bind(ibverbs, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
        createCq = bind(ibverbs, "ibv_create_cq",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
        destroyCq = bind(ibverbs, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
        createQp = bind(ibverbs, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
        modifyQp = bind(ibverbs, "ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
        destroyQp = bind(ibverbs, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
        initObj = bind(mlx5, "mlx5dv_init_obj", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG), true);
        isSupported = bind(mlx5, "mlx5dv_is_supported", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS), false);
        pageSize = systemPageSize();
    }

    private static MethodHandle bind(SymbolLookup lookup, String function, FunctionDescriptor descriptor,
                                     boolean errno) {
        MemorySegment symbol = lookup.find(function).orElseThrow();
        return errno ? LINKER.downcallHandle(symbol, descriptor, ERRNO) : LINKER.downcallHandle(symbol, descriptor);
    }

    private static int systemPageSize() {
        MemorySegment getpagesize = LINKER.defaultLookup().find("getpagesize").orElseThrow();
        try {
            return (int) LINKER.downcallHandle(getpagesize, FunctionDescriptor.of(JAVA_INT)).invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** The outcome of the one lookup per JVM: a library, or why there is none. */
    record Probe(VerbsLibrary library, String problem) {
    }

    /** Lazy holder: the lookup runs when {@link #get()} is first called, not when this class loads. */
    private static final class Holder {
        static final Probe PROBE = probe(IBVERBS, MLX5);
    }

    /**
     * @return the bound libraries
     * @throws VerbsException if they cannot be used; the message says why and what to install
     */
    static VerbsLibrary get() {
        Probe probe = Holder.PROBE;
        if (probe.library() == null) {
            throw new VerbsException("loading rdma-core", 0, probe.problem());
        }
        return probe.library();
    }

    /** @return why the libraries cannot be used, or empty when {@link #get()} succeeds */
    static Optional<String> problem() {
        return Optional.ofNullable(Holder.PROBE.problem());
    }

    /**
     * Looks the two libraries up by name and binds them (the libraries stay loaded for the life of the JVM).
     *
     * @param ibverbs the verbs library's name
     * @param mlx5    the mlx5 provider's name
     * @return the library, or why there is none
     */
    static Probe probe(String ibverbs, String mlx5) {
        SymbolLookup verbs;
        try {
            verbs = SymbolLookup.libraryLookup(ibverbs, Arena.global());
        } catch (IllegalArgumentException e) {
            return new Probe(null, ibverbs + " not found: rdma-core's verbs library is not installed; install Debian's "
                    + "libibverbs1 and ibverbs-providers (apt-get install libibverbs1 ibverbs-providers), or add the "
                    + "folder holding " + ibverbs + " to LD_LIBRARY_PATH");
        }
        SymbolLookup provider;
        try {
            provider = SymbolLookup.libraryLookup(mlx5, Arena.global());
        } catch (IllegalArgumentException e) {
            return new Probe(null, mlx5 + " not found: rdma-core's mlx5 provider (direct verbs for ConnectX NICs) is not "
                    + "installed; install Debian's ibverbs-providers (apt-get install ibverbs-providers), or add the "
                    + "folder holding " + mlx5 + " to LD_LIBRARY_PATH");
        }
        for (String f : IBVERBS_FUNCTIONS) {
            if (verbs.find(f).isEmpty()) {
                return new Probe(null, ibverbs + " does not export " + f + ": it is not rdma-core's verbs library, or older "
                        + "than rdma-core 34; install Debian's libibverbs1 and ibverbs-providers (rdma-core 34 or newer)");
            }
        }
        for (String f : MLX5_FUNCTIONS) {
            if (provider.find(f).isEmpty()) {
                return new Probe(null, mlx5 + " does not export " + f + ": it is not rdma-core's mlx5 provider, or older "
                        + "than rdma-core 34; install Debian's ibverbs-providers (rdma-core 34 or newer)");
            }
        }
        return new Probe(new VerbsLibrary(verbs, provider), null);
    }

    /**
     * @param arena where to allocate
     * @return a segment a call captures errno into, passed as its first argument
     */
    static MemorySegment errnoSlot(Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    /**
     * @param slot a segment from {@link #errnoSlot} a call has written
     * @return the errno the call left
     */
    static int errno(MemorySegment slot) {
        return (int) ERRNO_VALUE.get(slot, 0L);
    }

    /** @return the system's page size, from {@code getpagesize()} */
    int pageSize() {
        return pageSize;
    }

    // ---- downcalls: one method per function, results as the library returns them ---------------------------

    /** {@code struct ibv_device **ibv_get_device_list(int *num_devices)}; NULL with errno on failure. */
    MemorySegment getDeviceList(MemorySegment errno, MemorySegment count) {
        try {
            return (MemorySegment) getDeviceList.invokeExact(errno, count);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code void ibv_free_device_list(struct ibv_device **list)}. */
    void freeDeviceList(MemorySegment list) {
        try {
            freeDeviceList.invokeExact(list);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code const char *ibv_get_device_name(struct ibv_device *device)}. */
    MemorySegment getDeviceName(MemorySegment device) {
        try {
            return (MemorySegment) getDeviceName.invokeExact(device);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code bool mlx5dv_is_supported(struct ibv_device *device)}. */
    boolean isMlx5(MemorySegment device) {
        try {
            return (boolean) isSupported.invokeExact(device);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code struct ibv_context *ibv_open_device(struct ibv_device *device)}; NULL with errno on failure. */
    MemorySegment openDevice(MemorySegment errno, MemorySegment device) {
        try {
            return (MemorySegment) openDevice.invokeExact(errno, device);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int ibv_close_device(struct ibv_context *context)}. */
    int closeDevice(MemorySegment errno, MemorySegment context) {
        try {
            return (int) closeDevice.invokeExact(errno, context);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)}. */
    int queryDevice(MemorySegment errno, MemorySegment context, MemorySegment attr) {
        try {
            return (int) queryDevice.invokeExact(errno, context, attr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * The exported {@code int ibv_query_port(struct ibv_context *, uint8_t port, struct _compat_ibv_port_attr *)}.
     *
     * @param attr zeroed, at least {@link VerbsLayouts#PORT_ATTR_ROOM} bytes
     */
    int queryPort(MemorySegment errno, MemorySegment context, int port, MemorySegment attr) {
        if (attr.byteSize() < VerbsLayouts.PORT_ATTR_ROOM) {
            throw new IllegalArgumentException("ibv_query_port needs " + VerbsLayouts.PORT_ATTR_ROOM + " bytes, got "
                    + attr.byteSize());
        }
        try {
            return (int) queryPort.invokeExact(errno, context, (byte) port, attr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int ibv_query_gid(struct ibv_context *, uint8_t port, int index, union ibv_gid *gid)}. */
    int queryGid(MemorySegment errno, MemorySegment context, int port, int index, MemorySegment gid) {
        try {
            return (int) queryGid.invokeExact(errno, context, (byte) port, index, gid);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)}; NULL with errno on failure. */
    MemorySegment allocPd(MemorySegment errno, MemorySegment context) {
        try {
            return (MemorySegment) allocPd.invokeExact(errno, context);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int ibv_dealloc_pd(struct ibv_pd *pd)}. */
    int deallocPd(MemorySegment errno, MemorySegment pd) {
        try {
            return (int) deallocPd.invokeExact(errno, pd);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** The exported {@code struct ibv_mr *ibv_reg_mr(struct ibv_pd *, void *addr, size_t length, int access)}. */
    MemorySegment regMr(MemorySegment errno, MemorySegment pd, long address, long length, int access) {
        try {
            return (MemorySegment) regMr.invokeExact(errno, pd, MemorySegment.ofAddress(address), length, access);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *, uint64_t offset, size_t length, uint64_t iova, int fd,
     * int access)}.
     */
    MemorySegment regDmabufMr(MemorySegment errno, MemorySegment pd, long offset, long length, long iova, int fd,
                              int access) {
        try {
            return (MemorySegment) regDmabufMr.invokeExact(errno, pd, offset, length, iova, fd, access);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int ibv_dereg_mr(struct ibv_mr *mr)}. */
    int deregMr(MemorySegment errno, MemorySegment mr) {
        try {
            return (int) deregMr.invokeExact(errno, mr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code struct ibv_cq *ibv_create_cq(struct ibv_context *, int cqe, void *cq_context,
     * struct ibv_comp_channel *channel, int comp_vector)}, with no context, no channel and vector 0: the project polls.
     */
    MemorySegment createCq(MemorySegment errno, MemorySegment context, int entries) {
        try {
            return (MemorySegment) createCq.invokeExact(errno, context, entries, MemorySegment.NULL, MemorySegment.NULL, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int ibv_destroy_cq(struct ibv_cq *cq)}. */
    int destroyCq(MemorySegment errno, MemorySegment cq) {
        try {
            return (int) destroyCq.invokeExact(errno, cq);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code struct ibv_qp *ibv_create_qp(struct ibv_pd *, struct ibv_qp_init_attr *)}; writes the capacities given. */
    MemorySegment createQp(MemorySegment errno, MemorySegment pd, MemorySegment initAttr) {
        try {
            return (MemorySegment) createQp.invokeExact(errno, pd, initAttr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int ibv_modify_qp(struct ibv_qp *, struct ibv_qp_attr *, int attr_mask)}. */
    int modifyQp(MemorySegment errno, MemorySegment qp, MemorySegment attr, int mask) {
        try {
            return (int) modifyQp.invokeExact(errno, qp, attr, mask);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int ibv_destroy_qp(struct ibv_qp *qp)}. */
    int destroyQp(MemorySegment errno, MemorySegment qp) {
        try {
            return (int) destroyQp.invokeExact(errno, qp);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)}. */
    int initObj(MemorySegment errno, MemorySegment obj, long types) {
        try {
            return (int) initObj.invokeExact(errno, obj, types);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}

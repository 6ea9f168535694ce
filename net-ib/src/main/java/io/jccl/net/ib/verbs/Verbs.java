package io.jccl.net.ib.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * libibverbs through FFM: the exported verbs the transport calls outside the data path, found at
 * run time as NCCL finds them with {@code dlopen}. The data-path verbs ({@code post_send},
 * {@code post_recv}, {@code poll_cq}) are {@code static inline} in {@code verbs.h}; they live in
 * {@link VerbsOps}, called through the context's ops table.
 *
 * <p>Availability follows Netty's pattern: the library is looked up once, when this class
 * initialises; {@link #isAvailable()} says whether that worked and {@link #unavailabilityCause()}
 * why not. Having the library does not mean having a device: {@code ibv_get_device_list} may still
 * return none.
 *
 * <p>Calls that return a pointer capture {@code errno} ({@link Linker.Option#captureCallState}),
 * since libibverbs reports their failures only there; calls that return an {@code int} report the
 * error number as their result. Failures become {@link VerbsException}s.
 */
@SuppressWarnings("restricted") // this class is the binding: its downcalls and reinterprets are checked against verbs.h
public final class Verbs {
    /** The sonames tried, in order: the runtime library, then the development symlink. */
    private static final String[] LIBRARY_NAMES = {"libibverbs.so.1", "libibverbs.so"};

    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final Throwable UNAVAILABILITY_CAUSE;
    private static final String LIBRARY;

    private static final MethodHandle GET_DEVICE_LIST;
    private static final MethodHandle FREE_DEVICE_LIST;
    private static final MethodHandle GET_DEVICE_NAME;
    private static final MethodHandle OPEN_DEVICE;
    private static final MethodHandle CLOSE_DEVICE;
    private static final MethodHandle QUERY_DEVICE;
    private static final MethodHandle QUERY_PORT;
    private static final MethodHandle QUERY_GID_TABLE;
    private static final MethodHandle ALLOC_PD;
    private static final MethodHandle DEALLOC_PD;
    private static final MethodHandle REG_MR;
    private static final MethodHandle DEREG_MR;
    private static final MethodHandle CREATE_CQ;
    private static final MethodHandle DESTROY_CQ;
    private static final MethodHandle CREATE_QP;
    private static final MethodHandle MODIFY_QP;
    private static final MethodHandle DESTROY_QP;
    private static final MethodHandle GET_ASYNC_EVENT;
    private static final MethodHandle ACK_ASYNC_EVENT;
    private static final MethodHandle EVENT_TYPE_STR;
    private static final MethodHandle WC_STATUS_STR;
    private static final MethodHandle POLL;
    private static final MethodHandle FCNTL;
    private static final MethodHandle STRERROR;

    static {
        MethodHandle[] h = new MethodHandle[24];
        Throwable cause = null;
        String library = null;
        try {
            SymbolLookup libc = LINKER.defaultLookup();
            h[21] = LINKER.downcallHandle(find(libc, "poll"),
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
            h[22] = LINKER.downcallHandle(find(libc, "fcntl"),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));
            h[23] = LINKER.downcallHandle(find(libc, "strerror"), FunctionDescriptor.of(ADDRESS, JAVA_INT));

            List<String> tried = new ArrayList<>();
            SymbolLookup ibv = null;
            for (String name : LIBRARY_NAMES) {
                try {
                    ibv = SymbolLookup.libraryLookup(name, Arena.global());
                    library = name;
                    break;
                } catch (IllegalArgumentException e) {
                    tried.add(name);
                }
            }
            if (ibv == null) {
                throw new UnsatisfiedLinkError("libibverbs not found (tried " + String.join(", ", tried)
                        + " on the dynamic linker's path): install rdma-core's libibverbs1 "
                        + "(Debian/Ubuntu: apt-get install libibverbs1 ibverbs-providers)");
            }
            h[0] = down(ibv, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
            h[1] = down(ibv, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS), false);
            h[2] = down(ibv, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS), false);
            h[3] = down(ibv, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
            h[4] = down(ibv, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
            h[5] = down(ibv, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), false);
            h[6] = down(ibv, "ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS), false);
            h[7] = down(ibv, "_ibv_query_gid_table",
                    FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG), false);
            h[8] = down(ibv, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
            h[9] = down(ibv, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
            h[10] = down(ibv, "ibv_reg_mr", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), true);
            h[11] = down(ibv, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
            h[12] = down(ibv, "ibv_create_cq",
                    FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
            h[13] = down(ibv, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
            h[14] = down(ibv, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
            h[15] = down(ibv, "ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), false);
            h[16] = down(ibv, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
            h[17] = down(ibv, "ibv_get_async_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
            h[18] = down(ibv, "ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS), false);
            h[19] = down(ibv, "ibv_event_type_str", FunctionDescriptor.of(ADDRESS, JAVA_INT), false);
            h[20] = down(ibv, "ibv_wc_status_str", FunctionDescriptor.of(ADDRESS, JAVA_INT), false);
        } catch (Throwable t) {
            cause = t;
        }
        UNAVAILABILITY_CAUSE = cause;
        LIBRARY = cause == null ? library : null;
        GET_DEVICE_LIST = h[0];
        FREE_DEVICE_LIST = h[1];
        GET_DEVICE_NAME = h[2];
        OPEN_DEVICE = h[3];
        CLOSE_DEVICE = h[4];
        QUERY_DEVICE = h[5];
        QUERY_PORT = h[6];
        QUERY_GID_TABLE = h[7];
        ALLOC_PD = h[8];
        DEALLOC_PD = h[9];
        REG_MR = h[10];
        DEREG_MR = h[11];
        CREATE_CQ = h[12];
        DESTROY_CQ = h[13];
        CREATE_QP = h[14];
        MODIFY_QP = h[15];
        DESTROY_QP = h[16];
        GET_ASYNC_EVENT = h[17];
        ACK_ASYNC_EVENT = h[18];
        EVENT_TYPE_STR = h[19];
        WC_STATUS_STR = h[20];
        POLL = h[21];
        FCNTL = h[22];
        STRERROR = h[23];
    }

    private Verbs() {
    }

    private static MemorySegment find(SymbolLookup lookup, String name) {
        Optional<MemorySegment> symbol = lookup.find(name);
        return symbol.orElseThrow(() -> new UnsatisfiedLinkError(name + " not found in "
                + (lookup == LINKER.defaultLookup() ? "the C library" : "libibverbs")
                + (name.startsWith("_ibv_query_gid_table") ? ": rdma-core 32 or newer is needed" : "")));
    }

    private static MethodHandle down(SymbolLookup lookup, String name, FunctionDescriptor fd, boolean errno) {
        MemorySegment symbol = find(lookup, name);
        return errno ? LINKER.downcallHandle(symbol, fd, CAPTURE_ERRNO) : LINKER.downcallHandle(symbol, fd);
    }

    /** @return whether libibverbs was found with every function the transport calls */
    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** @return why libibverbs cannot be used, or {@code null} if it can */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /**
     * @throws UnsatisfiedLinkError carrying {@link #unavailabilityCause()} if libibverbs cannot be
     *                              used
     */
    public static void ensureAvailability() {
        if (UNAVAILABILITY_CAUSE != null) {
            throw (Error) new UnsatisfiedLinkError("libibverbs cannot be used: " + UNAVAILABILITY_CAUSE.getMessage())
                    .initCause(UNAVAILABILITY_CAUSE);
        }
    }

    /** @return the soname that was loaded, e.g. {@code libibverbs.so.1}; {@code null} if none */
    public static String library() {
        return LIBRARY;
    }

    // ---- devices ----

    /**
     * @return the names and handles of the RDMA devices, in libibverbs' order; the list must be
     *         released with {@link #freeDeviceList}
     * @throws VerbsException if libibverbs cannot list devices (e.g. no kernel support)
     */
    public static DeviceList getDeviceList() throws VerbsException {
        ensureAvailability();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            MemorySegment num = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) GET_DEVICE_LIST.invokeExact(state, num);
            if (list.equals(MemorySegment.NULL)) {
                throw new VerbsException("ibv_get_device_list", errno(state), "");
            }
            int n = num.get(JAVA_INT, 0);
            MemorySegment array = list.reinterpret(ADDRESS.byteSize() * (n + 1L));
            List<MemorySegment> devices = new ArrayList<>(n);
            List<String> names = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                MemorySegment dev = array.getAtIndex(ADDRESS, i);
                devices.add(dev);
                MemorySegment name = (MemorySegment) GET_DEVICE_NAME.invokeExact(dev);
                names.add(name.reinterpret(Long.MAX_VALUE).getString(0));
            }
            return new DeviceList(list, List.copyOf(devices), List.copyOf(names));
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** The result of {@link #getDeviceList}: device handles and their names, index for index. */
    public record DeviceList(MemorySegment list, List<MemorySegment> devices, List<String> names) {
    }

    /** Releases a device list; contexts opened from it stay valid. */
    public static void freeDeviceList(DeviceList list) {
        try {
            FREE_DEVICE_LIST.invokeExact(list.list());
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** @return the context of the opened device, sized as {@code struct ibv_context} */
    public static MemorySegment openDevice(MemorySegment device, String name) throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            MemorySegment ctx = (MemorySegment) OPEN_DEVICE.invokeExact(state, device);
            if (ctx.equals(MemorySegment.NULL)) {
                throw new VerbsException("ibv_open_device", errno(state), name);
            }
            return ctx.reinterpret(IbvLayouts.Context.LAYOUT.byteSize());
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static void closeDevice(MemorySegment context) throws VerbsException {
        check("ibv_close_device", callInt(CLOSE_DEVICE, context), "");
    }

    /** Fills {@code attr} ({@code struct ibv_device_attr}). */
    public static void queryDevice(MemorySegment context, MemorySegment attr) throws VerbsException {
        int rc;
        try {
            rc = (int) QUERY_DEVICE.invokeExact(context, attr);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("ibv_query_device", rc, "");
    }

    /** Fills {@code attr} ({@code struct ibv_port_attr}, zeroed first as the inline wrapper does). */
    public static void queryPort(MemorySegment context, int port, MemorySegment attr) throws VerbsException {
        attr.fill((byte) 0);
        int rc;
        try {
            rc = (int) QUERY_PORT.invokeExact(context, (byte) port, attr);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("ibv_query_port", rc, "port " + port);
    }

    /**
     * Reads every valid GID of every port ({@code ibv_query_gid_table}).
     *
     * @param entries room for {@code maxEntries} {@code struct ibv_gid_entry}
     * @return the number of entries written
     */
    public static int queryGidTable(MemorySegment context, MemorySegment entries, int maxEntries) throws VerbsException {
        long n;
        try {
            n = (long) QUERY_GID_TABLE.invokeExact(context, entries, (long) maxEntries, 0,
                    IbvLayouts.GidEntry.LAYOUT.byteSize());
        } catch (Throwable t) {
            throw unexpected(t);
        }
        if (n < 0) {
            throw new VerbsException("ibv_query_gid_table", (int) -n, "");
        }
        return (int) n;
    }

    // ---- protection domains and memory registration ----

    public static MemorySegment allocPd(MemorySegment context) throws VerbsException {
        return pointerCall(ALLOC_PD, "ibv_alloc_pd", context, "");
    }

    public static void deallocPd(MemorySegment pd) throws VerbsException {
        check("ibv_dealloc_pd", callInt(DEALLOC_PD, pd), "");
    }

    /**
     * Registers {@code length} bytes at {@code address}.
     *
     * @return the {@code struct ibv_mr}, sized to read its keys
     */
    public static MemorySegment regMr(MemorySegment pd, long address, long length, int access) throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            MemorySegment mr = (MemorySegment) REG_MR.invokeExact(state, pd, MemorySegment.ofAddress(address), length,
                    access);
            if (mr.equals(MemorySegment.NULL)) {
                int errno = errno(state);
                throw new VerbsException("ibv_reg_mr", errno, length + " bytes at 0x" + Long.toHexString(address)
                        + (errno == 12 ? "; check the locked-memory limit (ulimit -l)" : ""));
            }
            return mr.reinterpret(IbvLayouts.Mr.LAYOUT.byteSize());
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static void deregMr(MemorySegment mr) throws VerbsException {
        check("ibv_dereg_mr", callInt(DEREG_MR, mr), "");
    }

    // ---- completion queues and queue pairs ----

    /** @return the {@code struct ibv_cq}, sized as such */
    public static MemorySegment createCq(MemorySegment context, int cqe) throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            MemorySegment cq = (MemorySegment) CREATE_CQ.invokeExact(state, context, cqe, MemorySegment.NULL,
                    MemorySegment.NULL, 0);
            if (cq.equals(MemorySegment.NULL)) {
                throw new VerbsException("ibv_create_cq", errno(state), cqe + " entries");
            }
            return cq.reinterpret(IbvLayouts.Cq.LAYOUT.byteSize());
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static void destroyCq(MemorySegment cq) throws VerbsException {
        check("ibv_destroy_cq", callInt(DESTROY_CQ, cq), "");
    }

    /** @return the {@code struct ibv_qp}, sized as such */
    public static MemorySegment createQp(MemorySegment pd, MemorySegment initAttr) throws VerbsException {
        MemorySegment qp = pointerCall(CREATE_QP, "ibv_create_qp", pd, initAttr, "RC");
        return qp.reinterpret(IbvLayouts.Qp.LAYOUT.byteSize());
    }

    public static void modifyQp(MemorySegment qp, MemorySegment attr, int mask, String what) throws VerbsException {
        int rc;
        try {
            rc = (int) MODIFY_QP.invokeExact(qp, attr, mask);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("ibv_modify_qp", rc, what);
    }

    public static void destroyQp(MemorySegment qp) throws VerbsException {
        check("ibv_destroy_qp", callInt(DESTROY_QP, qp), "");
    }

    // ---- asynchronous events ----

    /**
     * Reads one asynchronous event into {@code event} ({@code struct ibv_async_event}).
     *
     * @return {@code true} if an event was read, {@code false} if none was pending (the context's
     *         async fd is non-blocking)
     */
    public static boolean getAsyncEvent(MemorySegment context, MemorySegment event, MemorySegment state)
            throws VerbsException {
        int rc;
        try {
            rc = (int) GET_ASYNC_EVENT.invokeExact(state, context, event);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        if (rc == 0) {
            return true;
        }
        int errno = errno(state);
        if (errno == 11 || errno == 4) { // EAGAIN, EINTR
            return false;
        }
        throw new VerbsException("ibv_get_async_event", errno, "");
    }

    public static void ackAsyncEvent(MemorySegment event) {
        try {
            ACK_ASYNC_EVENT.invokeExact(event);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** @return e.g. {@code local catastrophic error} for {@code IBV_EVENT_DEVICE_FATAL} */
    public static String eventTypeString(int type) {
        return string(EVENT_TYPE_STR, type);
    }

    /** @return e.g. {@code transport retry counter exceeded} for {@code IBV_WC_RETRY_EXC_ERR} */
    public static String wcStatusString(int status) {
        return string(WC_STATUS_STR, status);
    }

    /** @return an allocation for {@link #getAsyncEvent}'s captured {@code errno} */
    public static MemorySegment allocateCallState(Arena arena) {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    // ---- libc ----

    /** Puts a file descriptor in non-blocking mode ({@code fcntl(F_SETFL, O_NONBLOCK)}). */
    public static void setNonBlocking(int fd) throws VerbsException {
        try {
            int flags = (int) FCNTL.invokeExact(fd, 3 /* F_GETFL */, 0);
            int rc = (int) FCNTL.invokeExact(fd, 4 /* F_SETFL */, flags | 0x800 /* O_NONBLOCK */);
            if (flags < 0 || rc < 0) {
                throw new VerbsException("fcntl", 0, "O_NONBLOCK on fd " + fd);
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * Waits until {@code fd} is readable ({@code poll(POLLIN)}).
     *
     * @param pollFd  scratch {@code struct pollfd}
     * @param state   scratch for the captured {@code errno}
     * @return whether it became readable within {@code timeoutMs}
     */
    public static boolean pollReadable(int fd, int timeoutMs, MemorySegment pollFd, MemorySegment state)
            throws VerbsException {
        pollFd.set(JAVA_INT, IbvLayouts.PollFd.FD, fd);
        pollFd.set(java.lang.foreign.ValueLayout.JAVA_SHORT, IbvLayouts.PollFd.EVENTS, (short) 1 /* POLLIN */);
        pollFd.set(java.lang.foreign.ValueLayout.JAVA_SHORT, IbvLayouts.PollFd.REVENTS, (short) 0);
        int rc;
        try {
            rc = (int) POLL.invokeExact(state, pollFd, 1L, timeoutMs);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        if (rc < 0) {
            int errno = errno(state);
            if (errno == 4) {
                return false;
            }
            throw new VerbsException("poll", errno, "fd " + fd);
        }
        return rc > 0;
    }

    /** @return e.g. {@code Cannot allocate memory (errno 12, ENOMEM)} */
    static String errnoDescription(int errno) {
        if (errno <= 0) {
            return "no errno reported";
        }
        String text = "error " + errno;
        if (STRERROR != null) {
            try {
                MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
                text = s.reinterpret(Long.MAX_VALUE).getString(0);
            } catch (Throwable ignored) {
                // keep the number alone
            }
        }
        return text + " (errno " + errno + ")";
    }

    // ---- helpers ----

    private static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    private static int callInt(MethodHandle handle, MemorySegment arg) {
        try {
            return (int) handle.invokeExact(arg);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    private static MemorySegment pointerCall(MethodHandle handle, String function, MemorySegment arg, String detail)
            throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            MemorySegment result = (MemorySegment) handle.invokeExact(state, arg);
            if (result.equals(MemorySegment.NULL)) {
                throw new VerbsException(function, errno(state), detail);
            }
            return result;
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    private static MemorySegment pointerCall(MethodHandle handle, String function, MemorySegment a, MemorySegment b,
            String detail) throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            MemorySegment result = (MemorySegment) handle.invokeExact(state, a, b);
            if (result.equals(MemorySegment.NULL)) {
                throw new VerbsException(function, errno(state), detail);
            }
            return result;
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** libibverbs returns the error number itself from its int-returning calls (or -1 and errno). */
    private static void check(String function, int rc, String detail) throws VerbsException {
        if (rc != 0) {
            throw new VerbsException(function, rc > 0 ? rc : 0, detail);
        }
    }

    private static String string(MethodHandle handle, int value) {
        try {
            MemorySegment s = (MemorySegment) handle.invokeExact(value);
            return s.equals(MemorySegment.NULL) ? Integer.toString(value) : s.reinterpret(Long.MAX_VALUE).getString(0);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    private static RuntimeException unexpected(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}

package io.jccl.nativenet;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetApiVersion;
import io.jccl.spi.NetComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static io.jccl.nativenet.Downcalls.I_IL;
import static io.jccl.nativenet.Downcalls.I_ILL;
import static io.jccl.nativenet.Downcalls.I_ILLL;
import static io.jccl.nativenet.Downcalls.I_ILLLL;
import static io.jccl.nativenet.Downcalls.I_L;
import static io.jccl.nativenet.Downcalls.I_LILL;
import static io.jccl.nativenet.Downcalls.I_LILLL;
import static io.jccl.nativenet.Downcalls.I_LILLLL;
import static io.jccl.nativenet.Downcalls.I_LILLLLL;
import static io.jccl.nativenet.Downcalls.I_LILLLLLL;
import static io.jccl.nativenet.Downcalls.I_LL;
import static io.jccl.nativenet.Downcalls.I_LLIIL;
import static io.jccl.nativenet.Downcalls.I_LLIILL;
import static io.jccl.nativenet.Downcalls.I_LLL;
import static io.jccl.nativenet.Downcalls.I_LLLIL;
import static io.jccl.nativenet.Downcalls.I_LLLILIL;
import static io.jccl.nativenet.Downcalls.I_LLLILL;
import static io.jccl.nativenet.Downcalls.I_LLLILLL;
import static io.jccl.nativenet.Downcalls.I_LLLLL;
import static io.jccl.nativenet.NativeComm.DONE;
import static io.jccl.nativenet.NativeComm.PROFILER_HANDLES;
import static io.jccl.nativenet.NativeComm.MAX_BUFFERS;
import static io.jccl.nativenet.NativeComm.RECV_DATA;
import static io.jccl.nativenet.NativeComm.RECV_HANDLES;
import static io.jccl.nativenet.NativeComm.RECV_SIZES;
import static io.jccl.nativenet.NativeComm.RECV_TAGS;
import static io.jccl.nativenet.NativeComm.REQUEST;
import static io.jccl.nativenet.NativeComm.SIZES;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A native ncclNet plugin ({@code ncclNetPlugin_v6} to {@code _v12}) as a {@link NetPlugin}: every
 * call goes to the plugin's function table, with each version's argument widths and struct layouts
 * (spec section 3), and with what NCCL's compat layer does for old versions (spec 4.5): the plugin's
 * own {@code init} once, sizes that must fit an {@code int} before v9, a NULL profiler handle and a
 * {@code ncclNetCommConfig} with no traffic class where the version takes them, no device offload.
 *
 * <p>The data path ({@code isend}, {@code irecv}, {@code test}) allocates nothing: each comm has its
 * own native scratch memory for out-parameters and arrays, and request pointers come back as pooled
 * {@link NativeRequest}s.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
public final class NativeNetPlugin implements NetPlugin {
    /** {@code MAX_NET_SIZE}: the largest message NCCL passes a v6 to v8 plugin. */
    private static final long MAX_NET_SIZE = 1L << 30;

    private final NativePluginLibrary library;
    private final NetApiVersion version;
    private final int v;
    /** The function table; read again after init, which some plugins use to fill it in. */
    private final MemorySegment table;
    /** The table's name as it was when the library was loaded: NCCL reads it then, and matches NCCL_NET against it. */
    private final String name;
    // The table's functions as last read: set in the constructor and after init, before the
    // volatile write of state that publishes them to the threads that go on to use the plugin.
    private MemorySegment fInit;
    private MemorySegment fDevices;
    private MemorySegment fGetProperties;
    private MemorySegment fListen;
    private MemorySegment fConnect;
    private MemorySegment fAccept;
    private MemorySegment fRegMr;
    private MemorySegment fRegMrDmaBuf;
    private MemorySegment fDeregMr;
    private MemorySegment fIsend;
    private MemorySegment fIrecv;
    private MemorySegment fIflush;
    private MemorySegment fTest;
    private MemorySegment fCloseSend;
    private MemorySegment fCloseRecv;
    private MemorySegment fCloseListen;
    private MemorySegment fFinalize;
    /** {@code ncclNetCommConfig} {trafficClass = -1}, for v10 connect and v11 init; the plugin may keep it. */
    private final MemorySegment commConfig = Arena.ofAuto().allocate(8, 8);

    private final PluginLoad load;
    private final Object lifecycle = new Object();
    private volatile State state = State.NEW;
    /** Why this object's init failed, while {@link #state} is {@link State#FAILED}. */
    private NetException failure;
    /** What devices() said after init: the bound of every device index the host passes on. */
    private volatile int deviceCount;
    /** ptrSupport of each device as getProperties last reported it, -1 where not read yet. */
    private volatile int[] ptrSupport = new int[0];
    private long context;

    /**
     * Where this plugin object stands. The host calls into the plugin only where NCCL would: after a
     * successful init, with a device index below the count devices() reported, and never again
     * once the plugin is disabled (failed init or devices, no device) or, v11+, finalized.
     */
    enum State { NEW, READY, NO_DEVICES, FAILED, CLOSED }

    NativeNetPlugin(NativePluginLibrary library, NetApiVersion version, long table) {
        this.library = library;
        this.version = version;
        this.v = version.number();
        this.load = PluginLoad.of(table);
        commConfig.set(JAVA_INT, 0, -1);
        this.table = MemorySegment.ofAddress(table).reinterpret(8L * version.netFunctionSlots());
        long namePointer = this.table.get(JAVA_LONG, 0);
        this.name = namePointer == 0 ? "(unnamed native plugin)"
                : MemorySegment.ofAddress(namePointer).reinterpret(Integer.MAX_VALUE).getString(0);
        readTable();
    }

    /**
     * Reads the functions of the table. Again after a successful init: a plugin may export a table
     * with only {@code name} and {@code init} and fill in the rest there (nccl-rdma-sharp-plugins
     * copies the IB or UCX table over its exported one, name included), and NCCL reads the functions
     * after init but keeps the name it read at load time.
     */
    private void readTable() {
        MemorySegment t = table;
        fInit = fn(t, 1);
        fDevices = fn(t, 2);
        fGetProperties = fn(t, 3);
        fListen = fn(t, 4);
        fConnect = fn(t, 5);
        fAccept = fn(t, 6);
        fRegMr = fn(t, 7);
        fRegMrDmaBuf = fn(t, 8);
        fDeregMr = fn(t, 9);
        fIsend = fn(t, 10);
        fIrecv = fn(t, 11);
        fIflush = fn(t, 12);
        fTest = fn(t, 13);
        fCloseSend = fn(t, 14);
        fCloseRecv = fn(t, 15);
        fCloseListen = fn(t, 16);
        fFinalize = v >= 11 ? fn(t, 20) : MemorySegment.NULL;
    }

    private static MemorySegment fn(MemorySegment table, int slot) {
        return MemorySegment.ofAddress(table.get(JAVA_LONG, 8L * slot));
    }

    /** @return the library this plugin lives in */
    public NativePluginLibrary library() {
        return library;
    }

    /** @return the ncclNet version of the table in use */
    public NetApiVersion apiVersion() {
        return version;
    }

    @Override
    public String name() {
        return name;
    }

    // ---- life cycle ------------------------------------------------------------------------------

    /**
     * As NCCL initialises a plugin (spec 4.3): {@code init} (before v11 once per load, v11+ once per
     * plugin object, with a ctx out-pointer, a comm id, a config whose traffic class is undefined,
     * the host's logger and a profiler callback that records nothing), then {@code devices}. A
     * failed init or devices disables the plugin for the process; 0 devices disables it too, but
     * init succeeds and {@link #devices()} answers 0, so that callers can tell "no device" from an
     * error. No further call of a disabled plugin enters it.
     */
    @Override
    public void init(NetLogger logger) throws NetException {
        synchronized (lifecycle) {
            HostSupport host = HostSupport.get();
            host.use(logger);
            switch (state) {
                case READY, NO_DEVICES -> {
                    return;
                }
                case FAILED -> throw PluginLoad.refused(name, "init", failure);
                default -> {
                }
            }
            synchronized (load) {
                NetException disabled = load.disabled();
                if (disabled != null) {
                    throw fail(PluginLoad.refused(name, "init", disabled));
                }
                if (load.noDevices()) {
                    deviceCount = 0;
                    state = State.NO_DEVICES;
                    return;
                }
                readTable();
                if (fInit.address() == 0) {
                    throw fail(load.disable(NetException.invalidUsage(name + " (" + library.file() + ") has a NULL "
                            + "init in its ncclNet_v" + v + " table")));
                }
                int rc = callInit(host);
                if (rc != 0) {
                    throw fail(load.disable(new NetException(PluginResults.resultOf(rc), name + ": init returned " + rc + " ("
                            + PluginResults.ncclName(rc) + "); the plugin's log says why, and NCCL would disable the plugin")));
                }
                readTable();
                String missing = missingRequiredFunctions();
                if (missing != null) {
                    finalizeAfterFailedSetUp();
                    throw fail(load.disable(NetException.invalidUsage(name + " (" + library.file() + ") has NULL "
                            + missing + " in its ncclNet_v" + v + " table after init")));
                }
                int n;
                try {
                    n = callDevices();
                } catch (NetException e) {
                    finalizeAfterFailedSetUp();
                    throw fail(load.disable(e));
                }
                if (n < 0) {
                    finalizeAfterFailedSetUp();
                    throw fail(load.disable(NetException.internalError(name + ": devices() reported " + n
                            + " devices after init")));
                }
                deviceCount = n;
                ptrSupport = unread(n);
                if (n == 0) {
                    // NCCL disables a plugin without devices and finalizes the context of that init (spec 4.3).
                    finalizeAfterFailedSetUp();
                    load.disableForNoDevices();
                    state = State.NO_DEVICES;
                    return;
                }
                state = State.READY;
            }
        }
    }

    private String missingRequiredFunctions() {
        List<String> missing = new ArrayList<>();
        String[] names = {"init", "devices", "getProperties", "listen", "connect", "accept", "regMr", "deregMr",
                "isend", "irecv", "test", "closeSend", "closeRecv", "closeListen"};
        MemorySegment[] required = {fInit, fDevices, fGetProperties, fListen, fConnect, fAccept, fRegMr, fDeregMr,
                fIsend, fIrecv, fTest, fCloseSend, fCloseRecv, fCloseListen};
        for (int i = 0; i < required.length; i++) {
            if (required[i].address() == 0) {
                missing.add(names[i]);
            }
        }
        return missing.isEmpty() ? null : missing.toString();
    }

    /** The plugin's init, with the arguments of its version; before v11 once per load. Holds {@link #load}. */
    private int callInit(HostSupport host) throws NetException {
        if (v <= 10 && load.legacyInitDone()) {
            return 0;
        }
        int rc;
        try (Arena arena = Arena.ofConfined()) {
            if (v <= 9) {
                rc = (int) I_L.invokeExact(fInit, host.logger);
            } else if (v == 10) {
                rc = (int) I_LL.invokeExact(fInit, host.logger, host.profiler);
            } else {
                MemorySegment ctx = arena.allocate(JAVA_LONG); // zeroed: *ctx is NULL until init sets it
                long commId = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
                rc = (int) I_LLLLL.invokeExact(fInit, ctx.address(), commId, commConfig.address(), host.logger,
                        host.profiler);
                context = ctx.get(JAVA_LONG, 0);
            }
        } catch (Throwable e) {
            throw fail(load.disable(crashed("init", e)));
        }
        if (rc == 0 && v <= 10) {
            load.legacyInitSucceeded();
        }
        return rc;
    }

    private int callDevices() throws NetException {
        return PluginResults.devices(name, fDevices);
    }

    /** v11+: finalize the context of an init whose devices failed or were none, as NCCL does; errors only logged. */
    private void finalizeAfterFailedSetUp() {
        if (v >= 11 && fFinalize.address() != 0) {
            try {
                int ignored = (int) I_L.invokeExact(fFinalize, context);
            } catch (Throwable e) {
                // The plugin is disabled either way; its finalize failing changes nothing.
            }
        }
    }

    private NetException fail(NetException why) {
        failure = why;
        state = State.FAILED;
        return why;
    }

    /** v11 and later: {@code finalize} of the context (if the plugin has one); older versions have none (NCCL calls none either). */
    @Override
    public void close() throws NetException {
        synchronized (lifecycle) {
            if (state != State.READY) {
                if (state == State.NO_DEVICES) {
                    state = State.CLOSED;
                }
                return;
            }
            state = State.CLOSED;
            if (v < 11 || fFinalize.address() == 0) {
                return;
            }
            int rc;
            try {
                rc = (int) I_L.invokeExact(fFinalize, context);
            } catch (Throwable e) {
                throw crashed("finalize", e);
            }
            check(rc, "finalize");
        }
    }

    /** Throws unless the plugin is initialised, has devices, and is not closed: what every call but devices needs. */
    private void requireReady(String call) throws NetException {
        State s = state;
        if (s != State.READY) {
            throw notReady(s, call);
        }
    }

    private NetException notReady(State s, String call) {
        return switch (s) {
            case NEW -> NetException.internalError(name + ": " + call + " before init; NCCL calls init first");
            case FAILED -> PluginLoad.refused(name, call, failure);
            case NO_DEVICES -> NetException.invalidUsage(name + " reports 0 devices, so NCCL does not use it: "
                    + call + " not called");
            case CLOSED -> NetException.internalError(name + ": " + call + " after close (finalize)");
            case READY -> throw new IllegalStateException("ready");
        };
    }

    /** Throws unless {@code dev} is a device index the plugin reported: NCCL passes no other. */
    private void requireDevice(String call, int dev) throws NetException {
        requireReady(call);
        int n = deviceCount;
        if (dev < 0 || dev >= n) {
            throw NetException.invalidArgument(name + ": " + call + "(dev " + dev + ") not called: the plugin has " + n
                    + " device" + (n == 1 ? "" : "s") + ", and NCCL passes no other index");
        }
    }

    /** @return the device count; after init as many as the plugin reports, 0 for a plugin without devices */
    @Override
    public int devices() throws NetException {
        State s = state;
        if (s == State.NO_DEVICES) {
            return 0;
        }
        requireReady("devices");
        int n = callDevices();
        if (n != deviceCount) {
            ptrSupport = unread(n);
        }
        deviceCount = n;
        return n;
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        requireDevice("getProperties", dev);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(version.propertiesSize(), 8);
            int rc = (int) I_IL.invokeExact(fGetProperties, dev, p.address());
            check(rc, "getProperties(" + dev + ")");
            NetProperties props = NativeProperties.read(version, p);
            int[] known = ptrSupport;
            if (dev < known.length) {
                known[dev] = props.ptrSupport();
            }
            return props;
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("getProperties", e);
        }
    }

    private static int[] unread(int devices) {
        int[] a = new int[Math.max(0, devices)];
        Arrays.fill(a, -1);
        return a;
    }

    /**
     * NCCL registers only memory of a type the comm's device supports (host always, CUDA and
     * dma-buf where ptrSupport says so): anything else is refused here, without entering the plugin.
     */
    private void requireSupported(NativeComm c, PointerType type, String call) throws NetException {
        if (type == PointerType.HOST || c.dev < 0) {
            return;
        }
        int[] known = ptrSupport;
        int ptr = c.dev < known.length ? known[c.dev] : -1;
        if (ptr < 0) {
            ptr = getProperties(c.dev).ptrSupport();
        }
        if (!type.isIn(ptr)) {
            throw NetException.invalidUsage(name + ": " + call + " of " + type + " memory not called: device " + c.dev
                    + " supports " + PointerType.describe(ptr) + ", and NCCL registers no other type");
        }
    }

    // ---- connections -----------------------------------------------------------------------------

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        requireDevice("listen", dev);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment h = nativeHandle(handle, arena);
            MemorySegment out = arena.allocate(JAVA_LONG);
            int rc = v >= 11 ? (int) I_LILL.invokeExact(fListen, context, dev, h.address(), out.address())
                    : (int) I_ILL.invokeExact(fListen, dev, h.address(), out.address());
            syncBack(handle, h);
            check(rc, "listen");
            long comm = out.get(JAVA_LONG, 0);
            if (comm == 0) {
                throw NetException.internalError(name + " listen succeeded without a listen comm");
            }
            return new NativeListenComm(this, comm, dev);
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("listen", e);
        }
    }

    @Override
    public SendComm connect(int dev, NetHandle handle) throws NetException {
        requireDevice("connect", dev);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment h = nativeHandle(handle, arena);
            MemorySegment out = arena.allocate(JAVA_LONG);
            MemorySegment devComm = arena.allocate(JAVA_LONG);
            int rc;
            if (v == 6) {
                rc = (int) I_ILL.invokeExact(fConnect, dev, h.address(), out.address());
            } else if (v <= 9) {
                rc = (int) I_ILLL.invokeExact(fConnect, dev, h.address(), out.address(), devComm.address());
            } else if (v == 10) {
                rc = (int) I_ILLLL.invokeExact(fConnect, dev, commConfig.address(), h.address(), out.address(),
                        devComm.address());
            } else {
                rc = (int) I_LILLL.invokeExact(fConnect, context, dev, h.address(), out.address(), devComm.address());
            }
            syncBack(handle, h);
            check(rc, "connect");
            long comm = out.get(JAVA_LONG, 0);
            return comm == 0 ? null : new NativeSendComm(this, comm, dev);
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("connect", e);
        }
    }

    @Override
    public RecvComm accept(ListenComm listenComm) throws NetException {
        if (!(listenComm instanceof NativeListenComm l) || l.plugin != this) {
            throw NetException.invalidArgument("not a listen comm of " + name + ": " + listenComm);
        }
        requireReady("accept");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            MemorySegment devComm = arena.allocate(JAVA_LONG);
            int rc = v == 6 ? (int) I_LL.invokeExact(fAccept, l.pointer, out.address())
                    : (int) I_LLL.invokeExact(fAccept, l.pointer, out.address(), devComm.address());
            check(rc, "accept");
            long comm = out.get(JAVA_LONG, 0);
            return comm == 0 ? null : new NativeRecvComm(this, comm, l.dev);
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("accept", e);
        }
    }

    /** NCCL's handle buffer is native; a handle the caller keeps on the heap is copied around the call. */
    private static MemorySegment nativeHandle(NetHandle handle, Arena arena) {
        MemorySegment h = handle.segment();
        return h.isNative() ? h : arena.allocate(NetHandle.SIZE, 8).copyFrom(h);
    }

    private static void syncBack(NetHandle handle, MemorySegment used) {
        if (used != handle.segment()) {
            handle.segment().copyFrom(used);
        }
    }

    @Override
    public void closeSend(SendComm comm) throws NetException {
        close("closeSend", fCloseSend, comm instanceof NativeSendComm c && c.plugin == this ? c : null, comm);
    }

    @Override
    public void closeRecv(RecvComm comm) throws NetException {
        close("closeRecv", fCloseRecv, comm instanceof NativeRecvComm c && c.plugin == this ? c : null, comm);
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        close("closeListen", fCloseListen, comm instanceof NativeListenComm c && c.plugin == this ? c : null, comm);
    }

    private void close(String op, MemorySegment fn, NativeComm c, Object given) throws NetException {
        if (c == null) {
            throw NetException.invalidArgument(op + ": not a comm of " + name + ": " + given);
        }
        requireReady(op);
        int rc;
        try {
            rc = (int) I_L.invokeExact(fn, c.pointer);
        } catch (Throwable e) {
            throw crashed(op, e);
        }
        check(rc, op);
    }

    // ---- memory ----------------------------------------------------------------------------------

    /** The comm of a registration call; also checks that the plugin was not closed meanwhile. */
    private NativeComm dataComm(NetComm comm) throws NetException {
        if (comm instanceof NativeComm c && c.plugin == this && (c instanceof NativeSendComm || c instanceof NativeRecvComm)) {
            requireReady("a registration");
            return c;
        }
        throw NetException.invalidArgument("not a send or receive comm of " + name + ": " + comm);
    }

    @Override
    public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
        NativeComm c = dataComm(comm);
        if (!data.isNative()) {
            throw NetException.invalidArgument(name + " registers native memory only");
        }
        requireSupported(c, type, "regMr");
        long size = data.byteSize();
        if (v <= 7 && size >= 1L << 31) {
            throw NetException.internalError(name + " (ncclNet v" + v + ") registers at most 2 GiB - 1 at once");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int rc = v <= 7 ? (int) I_LLIIL.invokeExact(fRegMr, c.pointer, data.address(), (int) size, type.mask(), out.address())
                    : (int) I_LLLIL.invokeExact(fRegMr, c.pointer, data.address(), size, type.mask(), out.address());
            check(rc, "regMr");
            return new NativeMemoryHandle(c, out.get(JAVA_LONG, 0));
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("regMr", e);
        }
    }

    @Override
    public MemoryHandle regMrDmaBuf(NetComm comm, MemorySegment data, PointerType type, long offset, int fd)
            throws NetException {
        NativeComm c = dataComm(comm);
        if (fRegMrDmaBuf.address() == 0) {
            throw NetException.invalidUsage(name + " has no regMrDmaBuf");
        }
        requireSupported(c, type, "regMrDmaBuf");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int rc = (int) I_LLLILIL.invokeExact(fRegMrDmaBuf, c.pointer, data.address(), data.byteSize(), type.mask(),
                    offset, fd, out.address());
            check(rc, "regMrDmaBuf");
            return new NativeMemoryHandle(c, out.get(JAVA_LONG, 0));
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("regMrDmaBuf", e);
        }
    }

    @Override
    public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
        NativeComm c = dataComm(comm);
        NativeMemoryHandle m = handleOf(c, mhandle);
        m.released = true;
        int rc;
        try {
            rc = (int) I_LL.invokeExact(fDeregMr, c.pointer, m.pointer);
        } catch (Throwable e) {
            throw crashed("deregMr", e);
        }
        check(rc, "deregMr");
    }

    private NativeMemoryHandle handleOf(NativeComm c, MemoryHandle mhandle) throws NetException {
        if (mhandle instanceof NativeMemoryHandle m && m.comm == c && !m.released) {
            return m;
        }
        throw NetException.invalidArgument("memory handle " + mhandle + " is not a live registration of " + c);
    }

    // ---- data path -------------------------------------------------------------------------------

    @Override
    public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        if (!(comm instanceof NativeSendComm c) || c.plugin != this) {
            throw NetException.invalidArgument("not a send comm of " + name + ": " + comm);
        }
        NativeMemoryHandle m = handleOf(c, mhandle);
        long size = data.byteSize();
        long out = c.scratchAddress + REQUEST;
        c.scratch.set(JAVA_LONG, REQUEST, 0);
        int rc;
        try {
            if (v <= 8) {
                if (size > MAX_NET_SIZE) {
                    throw NetException.internalError(name + " (ncclNet v" + v + ") sends at most 1 GiB at once");
                }
                rc = (int) I_LLIILL.invokeExact(fIsend, c.pointer, data.address(), (int) size, tag, m.pointer, out);
            } else if (v == 9) {
                rc = (int) I_LLLILL.invokeExact(fIsend, c.pointer, data.address(), size, tag, m.pointer, out);
            } else {
                rc = (int) I_LLLILLL.invokeExact(fIsend, c.pointer, data.address(), size, tag, m.pointer, 0L, out);
            }
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("isend", e);
        }
        check(rc, "isend");
        long request = c.scratch.get(JAVA_LONG, REQUEST);
        return request == 0 ? null : c.request(request, 1);
    }

    @Override
    public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException {
        if (!(comm instanceof NativeRecvComm c) || c.plugin != this) {
            throw NetException.invalidArgument("not a receive comm of " + name + ": " + comm);
        }
        if (n < 1 || n > MAX_BUFFERS || data.length < n || tags.length < n || mhandles.length < n) {
            throw NetException.internalError("irecv of " + n + " buffers (arrays of " + data.length + ", " + tags.length
                    + ", " + mhandles.length + "); at most " + MAX_BUFFERS);
        }
        MemorySegment s = c.scratch;
        for (int i = 0; i < n; i++) {
            long size = data[i].byteSize();
            s.set(JAVA_LONG, RECV_DATA + 8L * i, data[i].address());
            if (v <= 8) {
                if (size > MAX_NET_SIZE) {
                    throw NetException.internalError(name + " (ncclNet v" + v + ") receives at most 1 GiB at once");
                }
                s.set(JAVA_INT, RECV_SIZES + 4L * i, (int) size);
            } else {
                s.set(JAVA_LONG, RECV_SIZES + 8L * i, size);
            }
            s.set(JAVA_INT, RECV_TAGS + 4L * i, tags[i]);
            s.set(JAVA_LONG, RECV_HANDLES + 8L * i, handleOf(c, mhandles[i]).pointer);
        }
        s.set(JAVA_LONG, REQUEST, 0);
        long base = c.scratchAddress;
        int rc;
        try {
            rc = v <= 9
                    ? (int) I_LILLLLL.invokeExact(fIrecv, c.pointer, n, base + RECV_DATA, base + RECV_SIZES,
                            base + RECV_TAGS, base + RECV_HANDLES, base + REQUEST)
                    : (int) I_LILLLLLL.invokeExact(fIrecv, c.pointer, n, base + RECV_DATA, base + RECV_SIZES,
                            base + RECV_TAGS, base + RECV_HANDLES, base + PROFILER_HANDLES, base + REQUEST);
        } catch (Throwable e) {
            throw crashed("irecv", e);
        }
        check(rc, "irecv");
        long request = s.get(JAVA_LONG, REQUEST);
        return request == 0 ? null : c.request(request, n);
    }

    @Override
    public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles) throws NetException {
        if (!(comm instanceof NativeRecvComm c) || c.plugin != this) {
            throw NetException.invalidArgument("not a receive comm of " + name + ": " + comm);
        }
        if (fIflush.address() == 0) {
            return null;
        }
        if (n < 1 || n > MAX_BUFFERS || data.length < n || mhandles.length < n) {
            throw NetException.internalError("iflush of " + n + " buffers; at most " + MAX_BUFFERS);
        }
        MemorySegment s = c.scratch;
        for (int i = 0; i < n; i++) {
            s.set(JAVA_LONG, RECV_DATA + 8L * i, data[i].address());
            s.set(JAVA_INT, RECV_SIZES + 4L * i, (int) Math.min(Integer.MAX_VALUE, data[i].byteSize()));
            s.set(JAVA_LONG, RECV_HANDLES + 8L * i, handleOf(c, mhandles[i]).pointer);
        }
        s.set(JAVA_LONG, REQUEST, 0);
        long base = c.scratchAddress;
        int rc;
        try {
            rc = (int) I_LILLLL.invokeExact(fIflush, c.pointer, n, base + RECV_DATA, base + RECV_SIZES,
                    base + RECV_HANDLES, base + REQUEST);
        } catch (Throwable e) {
            throw crashed("iflush", e);
        }
        check(rc, "iflush");
        long request = s.get(JAVA_LONG, REQUEST);
        return request == 0 ? null : c.request(request, n);
    }

    @Override
    public boolean test(NetRequest request, int[] sizes) throws NetException {
        if (!(request instanceof NativeRequest r) || !r.inFlight || r.comm.plugin != this) {
            throw NetException.invalidArgument("not a request of " + name + " in flight: " + request);
        }
        NativeComm c = r.comm;
        MemorySegment s = c.scratch;
        s.set(JAVA_INT, DONE, 0);
        long base = c.scratchAddress;
        int rc;
        try {
            rc = (int) I_LLL.invokeExact(fTest, r.pointer, base + DONE, sizes == null ? 0L : base + SIZES);
        } catch (Throwable e) {
            c.release(r);
            throw crashed("test", e);
        }
        if (rc != 0) {
            c.release(r);
            check(rc, "test");
        }
        if (s.get(JAVA_INT, DONE) == 0) {
            return false;
        }
        if (sizes != null) {
            int n = Math.min(r.buffers, sizes.length);
            for (int i = 0; i < n; i++) {
                sizes[i] = s.get(JAVA_INT, SIZES + 4L * i);
            }
        }
        c.release(r);
        return true;
    }

    // ---- failures --------------------------------------------------------------------------------

    private void check(int rc, String op) throws NetException {
        PluginResults.check(name, rc, op);
    }

    private NetException crashed(String op, Throwable e) {
        return PluginResults.crashed(name, op, e);
    }

    @Override
    public String toString() {
        return name + " (native ncclNet v" + v + ", " + library.file() + ")";
    }
}

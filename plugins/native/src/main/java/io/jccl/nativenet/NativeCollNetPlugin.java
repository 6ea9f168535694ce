package io.jccl.nativenet;

import io.jccl.nativenet.NativeNetPlugin.State;
import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetApiVersion;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ThreadLocalRandom;

import static io.jccl.nativenet.Downcalls.I_IIL;
import static io.jccl.nativenet.Downcalls.I_IL;
import static io.jccl.nativenet.Downcalls.I_ILL;
import static io.jccl.nativenet.Downcalls.I_L;
import static io.jccl.nativenet.Downcalls.I_LIILL;
import static io.jccl.nativenet.Downcalls.I_LILL;
import static io.jccl.nativenet.Downcalls.I_LL;
import static io.jccl.nativenet.Downcalls.I_LLIIL;
import static io.jccl.nativenet.Downcalls.I_LLILL;
import static io.jccl.nativenet.Downcalls.I_LLL;
import static io.jccl.nativenet.Downcalls.I_LLLIIILLL;
import static io.jccl.nativenet.Downcalls.I_LLLIL;
import static io.jccl.nativenet.Downcalls.I_LLLILIL;
import static io.jccl.nativenet.Downcalls.I_LLLLIILLL;
import static io.jccl.nativenet.NativeComm.DONE;
import static io.jccl.nativenet.NativeComm.REQUEST;
import static io.jccl.nativenet.NativeComm.SIZES;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A native ncclCollNet plugin ({@code ncclCollNetPlugin_v6} to {@code _v12}) as a
 * {@link CollNetPlugin}, adapting each version's table (v8 inserted {@code iallgather} and
 * {@code ireducescatter} before {@code iflush}, moving the later slots), argument widths and
 * properties as {@link NativeNetPlugin} does for ncclNet.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
public final class NativeCollNetPlugin implements CollNetPlugin {
    /** {@code MAX_NET_SIZE}: the largest element count NCCL passes a v6 to v8 iallreduce. */
    private static final long MAX_COUNT_BEFORE_V9 = 1L << 30;

    private final NativePluginLibrary library;
    private final NetApiVersion version;
    private final int v;
    /** The function table, read again after init (see NativeNetPlugin#readTable). */
    private final MemorySegment table;
    /** The table's name as it was when the library was loaded: NCCL reads it then, and matches NCCL_NET against it. */
    private final String name;
    private MemorySegment fInit;
    private MemorySegment fDevices;
    private MemorySegment fGetProperties;
    private MemorySegment fListen;
    private MemorySegment fConnect;
    private MemorySegment fReduceSupport;
    private MemorySegment fRegMr;
    private MemorySegment fRegMrDmaBuf;
    private MemorySegment fDeregMr;
    private MemorySegment fIallreduce;
    private MemorySegment fIflush;
    private MemorySegment fTest;
    private MemorySegment fCloseColl;
    private MemorySegment fCloseListen;
    private MemorySegment fFinalize;

    private final PluginLoad load;
    private final Object lifecycle = new Object();
    /** As {@link NativeNetPlugin}'s, except that NO_DEVICES is CollNet turned off, not an error. */
    private volatile State state = State.NEW;
    private NetException failure;
    private volatile int deviceCount;
    private long context;

    NativeCollNetPlugin(NativePluginLibrary library, NetApiVersion version, long table) {
        this.library = library;
        this.version = version;
        this.v = version.number();
        this.load = PluginLoad.of(table);
        this.table = MemorySegment.ofAddress(table).reinterpret(8L * version.collNetFunctionSlots());
        long namePointer = this.table.get(JAVA_LONG, 0);
        this.name = namePointer == 0 ? "(unnamed native plugin)"
                : MemorySegment.ofAddress(namePointer).reinterpret(Integer.MAX_VALUE).getString(0);
        readTable();
    }

    private void readTable() {
        MemorySegment t = table;
        int later = v >= 8 ? 2 : 0;
        fInit = fn(t, 1);
        fDevices = fn(t, 2);
        fGetProperties = fn(t, 3);
        fListen = fn(t, 4);
        fConnect = fn(t, 5);
        fReduceSupport = fn(t, 6);
        fRegMr = fn(t, 7);
        fRegMrDmaBuf = fn(t, 8);
        fDeregMr = fn(t, 9);
        fIallreduce = fn(t, 10);
        fIflush = fn(t, 11 + later);
        fTest = fn(t, 12 + later);
        fCloseColl = fn(t, 13 + later);
        fCloseListen = fn(t, 14 + later);
        fFinalize = v >= 11 ? fn(t, 18) : MemorySegment.NULL;
    }

    private static MemorySegment fn(MemorySegment table, int slot) {
        return MemorySegment.ofAddress(table.get(JAVA_LONG, 8L * slot));
    }

    /** @return the library this plugin lives in */
    public NativePluginLibrary library() {
        return library;
    }

    /** @return the ncclCollNet version of the table in use */
    public NetApiVersion apiVersion() {
        return version;
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * As NCCL initialises a CollNet plugin (spec 4.3): {@code init} (before v11 once per load), then
     * {@code devices}. A failed init or devices disables it for the process, and no later call
     * enters it; 0 devices turns CollNet off without an error: {@link #devices()} answers 0.
     */
    @Override
    public void init(NetLogger logger) throws NetException {
        synchronized (lifecycle) {
            HostSupport host = HostSupport.get();
            host.use(logger);
            if (state == State.READY || state == State.NO_DEVICES) {
                return;
            }
            if (state == State.FAILED) {
                throw PluginLoad.refused(name, "init", failure);
            }
            synchronized (load) {
                if (load.disabled() != null) {
                    throw fail(PluginLoad.refused(name, "init", load.disabled()));
                }
                if (load.noDevices()) {
                    deviceCount = 0;
                    state = State.NO_DEVICES;
                    return;
                }
                readTable();
                if (fInit.address() == 0) {
                    throw fail(load.disable(NetException.invalidUsage(name + " (" + library.file()
                            + ") has a NULL init")));
                }
                int rc = 0;
                if (v >= 11 || !load.legacyInitDone()) {
                    try (Arena arena = Arena.ofConfined()) {
                        if (v <= 10) {
                            rc = (int) I_L.invokeExact(fInit, host.logger);
                        } else {
                            MemorySegment ctx = arena.allocate(JAVA_LONG);
                            rc = (int) I_LLL.invokeExact(fInit, ctx.address(),
                                    ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE), host.logger);
                            context = ctx.get(JAVA_LONG, 0);
                        }
                    } catch (Throwable e) {
                        throw fail(load.disable(crashed("init", e)));
                    }
                    if (rc == 0 && v <= 10) {
                        load.legacyInitSucceeded();
                    }
                }
                if (rc != 0) {
                    throw fail(load.disable(new NetException(PluginResults.resultOf(rc), name + ": init returned "
                            + rc + " (" + PluginResults.ncclName(rc) + "); the plugin's log says why, and NCCL "
                            + "would run without CollNet")));
                }
                readTable();
                if (fDevices.address() == 0) {
                    throw fail(load.disable(NetException.invalidUsage(name + " (" + library.file()
                            + ") has a NULL devices after init")));
                }
                int n;
                try {
                    n = callDevices();
                } catch (NetException e) {
                    throw fail(load.disable(e));
                }
                deviceCount = Math.max(0, n);
                if (n <= 0) {
                    load.disableForNoDevices();
                    state = State.NO_DEVICES;
                    return;
                }
                state = State.READY;
            }
        }
    }

    private NetException fail(NetException why) {
        failure = why;
        state = State.FAILED;
        return why;
    }

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

    private void requireReady(String call) throws NetException {
        State s = state;
        if (s == State.READY) {
            return;
        }
        if (s == State.FAILED) {
            throw PluginLoad.refused(name, call, failure);
        }
        throw s == State.NO_DEVICES
                ? NetException.invalidUsage(name + " reports 0 CollNet devices, so NCCL runs without it: " + call
                        + " not called")
                : NetException.internalError(name + ": " + call + (s == State.NEW ? " before init" : " after close (finalize)"));
    }

    private void requireDevice(String call, int dev) throws NetException {
        requireReady(call);
        int n = deviceCount;
        if (dev < 0 || dev >= n) {
            throw NetException.invalidArgument(name + ": " + call + "(dev " + dev + ") not called: the plugin has " + n
                    + " CollNet device" + (n == 1 ? "" : "s") + ", and NCCL passes no other index");
        }
    }

    private int callDevices() throws NetException {
        return PluginResults.devices(name, fDevices);
    }

    @Override
    public int devices() throws NetException {
        if (state == State.NO_DEVICES) {
            return 0;
        }
        requireReady("devices");
        int n = callDevices();
        deviceCount = Math.max(0, n);
        return n;
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        requireDevice("getProperties", dev);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(version.propertiesSize(), 8);
            int rc = (int) I_IL.invokeExact(required(fGetProperties, "getProperties"), dev, p.address());
            check(rc, "getProperties(" + dev + ")");
            return NativeProperties.read(version, p);
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("getProperties", e);
        }
    }

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        requireDevice("listen", dev);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment h = handle.segment().isNative() ? handle.segment()
                    : arena.allocate(NetHandle.SIZE, 8).copyFrom(handle.segment());
            MemorySegment out = arena.allocate(JAVA_LONG);
            MemorySegment fn = required(fListen, "listen");
            int rc = v >= 11 ? (int) I_LILL.invokeExact(fn, context, dev, h.address(), out.address())
                    : (int) I_ILL.invokeExact(fn, dev, h.address(), out.address());
            if (h != handle.segment()) {
                handle.segment().copyFrom(h);
            }
            check(rc, "listen");
            return new NativeListenComm(this, out.get(JAVA_LONG, 0), dev);
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("listen", e);
        }
    }

    @Override
    public CollComm connect(NetHandle[] handles, int rank, ListenComm listenComm) throws NetException {
        if (!(listenComm instanceof NativeListenComm l) || l.plugin != this) {
            throw NetException.invalidArgument("not a listen comm of " + name + ": " + listenComm);
        }
        requireReady("connect");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment array = arena.allocate(JAVA_LONG, Math.max(1, handles.length));
            for (int i = 0; i < handles.length; i++) {
                MemorySegment h = handles[i].segment();
                if (!h.isNative()) {
                    h = arena.allocate(NetHandle.SIZE, 8).copyFrom(h);
                }
                array.setAtIndex(JAVA_LONG, i, h.address());
            }
            required(fIallreduce, "iallreduce");
            required(fTest, "test");
            required(fCloseColl, "closeColl");
            MemorySegment out = arena.allocate(JAVA_LONG);
            int rc = (int) I_LIILL.invokeExact(required(fConnect, "connect"), array.address(), handles.length, rank,
                    l.pointer, out.address());
            check(rc, "connect");
            return new NativeCollComm(this, out.get(JAVA_LONG, 0));
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("connect", e);
        }
    }

    @Override
    public boolean reduceSupport(DataType dataType, ReduceOp op) throws NetException {
        requireReady("reduceSupport");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int rc = (int) I_IIL.invokeExact(required(fReduceSupport, "reduceSupport"), dataType.code(), op.code(),
                    out.address());
            check(rc, "reduceSupport");
            return out.get(JAVA_INT, 0) != 0;
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("reduceSupport", e);
        }
    }

    private NativeCollComm collComm(CollComm comm) throws NetException {
        if (comm instanceof NativeCollComm c && c.plugin == this) {
            return c;
        }
        throw NetException.invalidArgument("not a collective comm of " + name + ": " + comm);
    }

    @Override
    public MemoryHandle regMr(CollComm comm, MemorySegment data, PointerType type) throws NetException {
        NativeCollComm c = collComm(comm);
        long size = data.byteSize();
        if (v <= 7 && size >= 1L << 31) {
            throw NetException.internalError(name + " (ncclCollNet v" + v + ") registers at most 2 GiB - 1 at once");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            MemorySegment fn = required(fRegMr, "regMr");
            int rc = v <= 7 ? (int) I_LLIIL.invokeExact(fn, c.pointer, data.address(), (int) size, type.mask(), out.address())
                    : (int) I_LLLIL.invokeExact(fn, c.pointer, data.address(), size, type.mask(), out.address());
            check(rc, "regMr");
            return new NativeMemoryHandle(c, out.get(JAVA_LONG, 0));
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("regMr", e);
        }
    }

    @Override
    public MemoryHandle regMrDmaBuf(CollComm comm, MemorySegment data, PointerType type, long offset, int fd)
            throws NetException {
        NativeCollComm c = collComm(comm);
        if (fRegMrDmaBuf.address() == 0) {
            throw NetException.invalidUsage(name + " has no regMrDmaBuf");
        }
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
    public void deregMr(CollComm comm, MemoryHandle mhandle) throws NetException {
        NativeCollComm c = collComm(comm);
        NativeMemoryHandle m = handleOf(c, mhandle);
        m.released = true;
        int rc;
        try {
            rc = (int) I_LL.invokeExact(required(fDeregMr, "deregMr"), c.pointer, m.pointer);
        } catch (NetException e) {
            throw e;
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

    @Override
    public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                 DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
            throws NetException {
        NativeCollComm c = collComm(comm);
        NativeMemoryHandle sm = handleOf(c, sendMhandle);
        NativeMemoryHandle rm = handleOf(c, recvMhandle);
        long out = c.scratchAddress + REQUEST;
        c.scratch.set(JAVA_LONG, REQUEST, 0);
        int rc;
        try {
            if (v <= 8) {
                if (count > MAX_COUNT_BEFORE_V9) {
                    throw NetException.internalError(name + " (ncclCollNet v" + v + ") reduces at most 2^30 elements");
                }
                rc = (int) I_LLLIIILLL.invokeExact(fIallreduce, c.pointer, sendData.address(), recvData.address(),
                        (int) count, dataType.code(), op.code(), sm.pointer, rm.pointer, out);
            } else {
                rc = (int) I_LLLLIILLL.invokeExact(fIallreduce, c.pointer, sendData.address(), recvData.address(), count,
                        dataType.code(), op.code(), sm.pointer, rm.pointer, out);
            }
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed("iallreduce", e);
        }
        check(rc, "iallreduce");
        long request = c.scratch.get(JAVA_LONG, REQUEST);
        return request == 0 ? null : c.request(request, 1);
    }

    @Override
    public NetRequest iflush(CollComm comm, MemorySegment data, MemoryHandle mhandle) throws NetException {
        NativeCollComm c = collComm(comm);
        if (fIflush.address() == 0) {
            return null;
        }
        NativeMemoryHandle m = handleOf(c, mhandle);
        c.scratch.set(JAVA_LONG, REQUEST, 0);
        int rc;
        try {
            rc = (int) I_LLILL.invokeExact(fIflush, c.pointer, data.address(),
                    (int) Math.min(Integer.MAX_VALUE, data.byteSize()), m.pointer, c.scratchAddress + REQUEST);
        } catch (Throwable e) {
            throw crashed("iflush", e);
        }
        check(rc, "iflush");
        long request = c.scratch.get(JAVA_LONG, REQUEST);
        return request == 0 ? null : c.request(request, 1);
    }

    @Override
    public boolean test(NetRequest request, int[] size) throws NetException {
        if (!(request instanceof NativeRequest r) || !r.inFlight || r.comm.plugin != this) {
            throw NetException.invalidArgument("not a request of " + name + " in flight: " + request);
        }
        NativeComm c = r.comm;
        c.scratch.set(JAVA_INT, DONE, 0);
        int rc;
        try {
            rc = (int) I_LLL.invokeExact(fTest, r.pointer, c.scratchAddress + DONE,
                    size == null ? 0L : c.scratchAddress + SIZES);
        } catch (Throwable e) {
            c.release(r);
            throw crashed("test", e);
        }
        if (rc != 0) {
            c.release(r);
            check(rc, "test");
        }
        if (c.scratch.get(JAVA_INT, DONE) == 0) {
            return false;
        }
        if (size != null && size.length > 0) {
            size[0] = c.scratch.get(JAVA_INT, SIZES);
        }
        c.release(r);
        return true;
    }

    @Override
    public void closeColl(CollComm comm) throws NetException {
        NativeCollComm c = collComm(comm);
        call("closeColl", fCloseColl, c.pointer);
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        if (!(comm instanceof NativeListenComm l) || l.plugin != this) {
            throw NetException.invalidArgument("not a listen comm of " + name + ": " + comm);
        }
        call("closeListen", fCloseListen, l.pointer);
    }

    private void call(String op, MemorySegment fn, long pointer) throws NetException {
        int rc;
        try {
            rc = (int) I_L.invokeExact(required(fn, op), pointer);
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed(op, e);
        }
        check(rc, op);
    }

    private MemorySegment required(MemorySegment fn, String op) throws NetException {
        if (fn.address() == 0) {
            throw NetException.invalidUsage(name + " has a NULL " + op + " in its ncclCollNet_v" + v + " table");
        }
        return fn;
    }

    private void check(int rc, String op) throws NetException {
        PluginResults.check(name, rc, op);
    }

    private NetException crashed(String op, Throwable e) {
        return PluginResults.crashed(name, op, e);
    }

    @Override
    public String toString() {
        return name + " (native ncclCollNet v" + v + ", " + library.file() + ")";
    }
}

package io.jccl.shim;

import io.jccl.spi.ListenComm;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import io.jccl.spi.SpiArrays;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

import static io.jccl.shim.HandleTable.Kind.CONTEXT;
import static io.jccl.shim.HandleTable.Kind.LISTEN;
import static io.jccl.shim.HandleTable.Kind.REGISTRATION;
import static io.jccl.shim.HandleTable.Kind.RECV;
import static io.jccl.shim.HandleTable.Kind.SEND;
import static io.jccl.shim.ShimAbi.INT;
import static io.jccl.shim.ShimAbi.LONG;
import static io.jccl.shim.ShimAbi.MEMORY;

/**
 * The ncclNet operations, as NCCL's calls arrive from the shim's C half: each public method is the
 * target of one upcall stub ({@link ShimAbi.NetOp}), takes NCCL's pointers as {@code long}s, calls
 * the Java transport, writes the results where NCCL asked, and returns an {@code ncclResult_t}.
 *
 * <p>No exception leaves a method (one escaping an upcall would end the process): transport
 * failures return their {@link NetResult} code and are logged to NCCL's logger; a bad handle returns
 * {@code ncclInvalidArgument}. {@code isend}, {@code irecv} and {@code test} allocate nothing in the
 * steady state: comms and registrations are found by index ({@link HandleTable}), requests by slot
 * ({@link BridgedComm}), and data segments come from {@link Registration}'s cache.
 */
final class NetBridge {
    private final String name;
    private final NetLogger logger;
    private final ClassLoader loader;
    private final HandleTable<BridgedComm> comms = new HandleTable<>();
    private final HandleTable<Registration> registrations = new HandleTable<>();
    private final HandleTable<Object> contexts = new HandleTable<>();
    private final PropertiesWriter properties = new PropertiesWriter();
    /** Set by the first init; read by every data call (volatile: NCCL's threads are not ours). */
    private volatile NetPlugin plugin;
    /** The upcall stubs NCCL's calls enter, for the warm-up; empty for a bridge made without them. */
    private Map<ShimAbi.NetOp, MemorySegment> entryPoints = Map.of();
    /** The data path's warm-up, started by the first init ({@link ShimWarmup}); null if none runs. */
    private volatile ShimWarmup warmup;

    NetBridge(String name, NetLogger logger, ClassLoader loader) {
        this.name = name;
        this.logger = logger;
        this.loader = loader;
    }

    /** Called once by {@link ShimBridge#bootstrap} with the stubs it installed. */
    void entryPoints(Map<ShimAbi.NetOp, MemorySegment> stubs) {
        this.entryPoints = Map.copyOf(stubs);
    }

    // ---- life cycle ------------------------------------------------------------------------------

    public int init(long ctxOut, long commId, int trafficClass, int apiVersion) {
        try {
            synchronized (this) {
                int warmupRounds = 0;
                if (plugin == null) {
                    try {
                        warmupRounds = ShimWarmup.configuredRounds();
                    } catch (IllegalArgumentException e) {
                        throw NetException.invalidUsage(e.getMessage());
                    }
                    plugin = select();
                    logger.info(LogSubsystem.INIT | LogSubsystem.NET, "NET/JCCL: %s (%s) serves ncclNet v%d, %d device%s",
                            plugin.name(), plugin.getClass().getName(), apiVersion, plugin.devices(),
                            plugin.devices() == 1 ? "" : "s");
                } else {
                    plugin.init(logger);
                }
                if (ctxOut != 0) {
                    MEMORY.set(LONG, ctxOut, contexts.add(commId, CONTEXT));
                }
                ShimWarmup w = warmupRounds > 0
                        ? ShimWarmup.create(entryPoints, logger, warmupRounds, () -> warmup = null) : null;
                if (w != null) {
                    warmup = w;
                    w.begin();
                }
            }
            return 0;
        } catch (Throwable e) {
            return failed("init", e);
        }
    }

    /** The Java transport named {@code name}, found with ServiceLoader and initialised. */
    private NetPlugin select() throws NetException {
        List<NetPlugin> found = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        var it = ServiceLoader.load(NetPlugin.class, loader).iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    break;
                }
                found.add(it.next());
            } catch (ServiceConfigurationError | LinkageError e) {
                problems.add(e.toString());
            }
        }
        NetPlugin chosen = found.stream().filter(p -> p.name().equalsIgnoreCase(name)).findFirst().orElse(null);
        if (chosen == null) {
            throw NetException.invalidUsage("no Java transport named " + name + " on the shim's class path (found: "
                    + (found.isEmpty() ? "none" : String.join(", ", found.stream().map(NetPlugin::name).toList()))
                    + (problems.isEmpty() ? "" : "; failed to load: " + String.join("; ", problems))
                    + "); set " + ShimConfig.JCCL_SHIM_NET + " to one of them, or " + ShimConfig.JCCL_SHIM_CLASSPATH
                    + " to add the transport's jar");
        }
        String missing = RuntimeModules.problem(chosen.name() + " (" + chosen.getClass().getName() + ")", chosen.getClass());
        if (missing != null) {
            throw NetException.systemError(missing);
        }
        chosen.init(logger);
        if (chosen.devices() < 1) {
            throw NetException.systemError(chosen.name() + " reports no devices");
        }
        return chosen;
    }

    public int finalizeContext(long ctx) {
        try {
            if (contexts.get(ctx, CONTEXT) == null) {
                return invalid("finalize", ctx, "context");
            }
            // NCCL's last communicator is going: a warm-up still running closes its comms first, so
            // that none is open at the leak check below (one communicator destroyed while others live
            // leaves it be). Outside the lock, which the warm-up's calls take.
            ShimWarmup w = warmup;
            if (w != null && contexts.size() == 1) {
                w.stopAndJoin();
            }
            synchronized (this) {
                contexts.remove(ctx);
                // NCCL finalizes a communicator's context after closing its comms; the transport is
                // released when no communicator is left and no comm is open (a v6-v10 user has none).
                if (contexts.size() == 0 && plugin != null) {
                    // NCCL closes every comm and deregisters every buffer before it finalizes the last
                    // context: what is still open here leaks with each communicator NCCL destroys.
                    if (comms.size() == 0 && registrations.size() == 0) {
                        logger.info(LogSubsystem.INIT | LogSubsystem.NET,
                                "NET/%s: last communicator finalized, no comm or registration left open", name);
                        plugin.close();
                    } else {
                        logger.warn("NET/%s: last communicator finalized with %d comms and %d registrations still "
                                + "open (leaked)", name, comms.size(), registrations.size());
                    }
                    AotTraining.end(logger);
                }
            }
            return 0;
        } catch (Throwable e) {
            return failed("finalize", e);
        }
    }

    public int devices(long ndevOut) {
        try {
            MEMORY.set(INT, ndevOut, plugin().devices());
            return 0;
        } catch (Throwable e) {
            return failed("devices", e);
        }
    }

    public int getProperties(int dev, long propsOut) {
        try {
            NetProperties p = plugin().getProperties(dev);
            properties.write(p, propsOut);
            return 0;
        } catch (Throwable e) {
            return failed("getProperties", e);
        }
    }

    private synchronized NetPlugin plugin() throws NetException {
        if (plugin == null) {
            throw NetException.internalError("called before init");
        }
        return plugin;
    }

    // ---- connections -----------------------------------------------------------------------------

    public int listen(long ctx, int dev, long handle, long listenCommOut) {
        try {
            NetPlugin p = plugin();
            ListenComm l = p.listen(dev, NetHandle.wrap(MEMORY.asSlice(handle, NetHandle.SIZE)));
            MEMORY.set(LONG, listenCommOut, add(l, LISTEN));
            return 0;
        } catch (Throwable e) {
            return failed("listen", e);
        }
    }

    public int connect(long ctx, int dev, long handle, long sendCommOut) {
        try {
            NetPlugin p = plugin();
            SendComm s = p.connect(dev, NetHandle.wrap(MEMORY.asSlice(handle, NetHandle.SIZE)));
            MEMORY.set(LONG, sendCommOut, s == null ? 0 : add(s, SEND));
            return 0;
        } catch (Throwable e) {
            return failed("connect", e);
        }
    }

    public int accept(long listenComm, long recvCommOut) {
        try {
            BridgedComm l = comms.get(listenComm, LISTEN);
            if (l == null) {
                return invalid("accept", listenComm, "listen comm");
            }
            RecvComm r = plugin().accept((ListenComm) l.comm);
            MEMORY.set(LONG, recvCommOut, r == null ? 0 : add(r, RECV));
            return 0;
        } catch (Throwable e) {
            return failed("accept", e);
        }
    }

    private long add(Object comm, HandleTable.Kind kind) {
        return comms.add(handle -> new BridgedComm(comm, kind, handle), kind);
    }

    public int closeSend(long sendComm) {
        return close("closeSend", sendComm, SEND);
    }

    public int closeRecv(long recvComm) {
        return close("closeRecv", recvComm, RECV);
    }

    public int closeListen(long listenComm) {
        return close("closeListen", listenComm, LISTEN);
    }

    private int close(String op, long handle, HandleTable.Kind kind) {
        BridgedComm c = comms.get(handle, kind);
        if (c == null) {
            return invalid(op, handle, kind.name().toLowerCase(Locale.ROOT) + " comm");
        }
        try {
            NetPlugin p = plugin();
            switch (kind) {
                case SEND -> p.closeSend((SendComm) c.comm);
                case RECV -> p.closeRecv((RecvComm) c.comm);
                default -> p.closeListen((ListenComm) c.comm);
            }
            return 0;
        } catch (Throwable e) {
            return failed(op, e);
        } finally {
            // Closed regardless of the outcome (SPI): forget the comm and what NCCL did not release.
            for (Registration r : c.registrations) {
                registrations.remove(r.handleValue);
            }
            c.registrations.clear();
            comms.remove(handle);
        }
    }

    // ---- memory ----------------------------------------------------------------------------------

    public int regMr(long comm, long data, long size, int type, long mhandleOut) {
        try {
            BridgedComm c = comms.get(comm, SEND, RECV);
            if (c == null) {
                return invalid("regMr", comm, "send or receive comm");
            }
            MemorySegment region = MEMORY.asSlice(data, size);
            MemoryHandle mh = plugin().regMr((NetComm) c.comm, region, pointerType(type));
            MEMORY.set(LONG, mhandleOut, register(c, mh, region));
            return 0;
        } catch (Throwable e) {
            return failed("regMr", e);
        }
    }

    public int regMrDmaBuf(long comm, long data, long size, int type, long offset, int fd, long mhandleOut) {
        try {
            BridgedComm c = comms.get(comm, SEND, RECV);
            if (c == null) {
                return invalid("regMrDmaBuf", comm, "send or receive comm");
            }
            MemorySegment region = MEMORY.asSlice(data, size);
            MemoryHandle mh = plugin().regMrDmaBuf((NetComm) c.comm, region, pointerType(type), offset, fd);
            MEMORY.set(LONG, mhandleOut, register(c, mh, region));
            return 0;
        } catch (Throwable e) {
            return failed("regMrDmaBuf", e);
        }
    }

    private long register(BridgedComm c, MemoryHandle mh, MemorySegment region) {
        long h = registrations.add(handle -> new Registration(c, mh, region, handle), REGISTRATION);
        c.registrations.add(registrations.get(h, REGISTRATION));
        return h;
    }

    static PointerType pointerType(int type) throws NetException {
        try {
            return PointerType.fromCode(type);
        } catch (IllegalArgumentException e) {
            throw NetException.invalidArgument(e.getMessage());
        }
    }

    public int deregMr(long comm, long mhandle) {
        try {
            BridgedComm c = comms.get(comm, SEND, RECV);
            Registration r = registrations.get(mhandle, REGISTRATION);
            if (c == null || r == null || r.owner != c) {
                return invalid("deregMr", mhandle, "memory handle of comm " + HandleTable.describe(comm));
            }
            try {
                plugin().deregMr((NetComm) c.comm, r.handle);
            } finally {
                registrations.remove(mhandle);
                c.registrations.remove(r);
            }
            return 0;
        } catch (Throwable e) {
            return failed("deregMr", e);
        }
    }

    // ---- data path -------------------------------------------------------------------------------

    /**
     * Sends up to this size are tested once inside {@link #isend}: a transport that writes small
     * messages at once (JcclSocket's inline and eager frames) finishes them there, and NCCL's
     * test of the request then costs no upcall. Larger sends are rarely done so soon.
     */
    static final long EARLY_TEST_MAX_BYTES = 16 << 10;

    public int isend(long sendComm, long data, long size, int tag, long mhandle, long requestOut) {
        ShimWarmup w = warmup;
        if (w != null) {
            w.ncclDataCall();
        }
        try {
            BridgedComm c = comms.get(sendComm, SEND);
            if (c == null) {
                return invalid("isend", sendComm, "send comm");
            }
            Registration r = registrations.get(mhandle, REGISTRATION);
            if (r == null || r.owner != c) {
                return invalid("isend", mhandle, "memory handle of this send comm");
            }
            NetRequest q = plugin.isend((SendComm) c.comm, r.slice(data, size), tag, r.handle);
            if (q != null && size <= EARLY_TEST_MAX_BYTES && plugin.test(q, null)) {
                // Already on the wire: NCCL gets a handle that says so, and the C test() answers it
                // without an upcall.
                MEMORY.set(LONG, requestOut, HandleTable.doneSend((int) size));
                return 0;
            }
            MEMORY.set(LONG, requestOut, q == null ? 0 : tracked(c, q, 1));
            return 0;
        } catch (Throwable e) {
            return failed("isend", e);
        }
    }

    public int irecv(long recvComm, int n, long data, long sizes, long tags, long mhandles, long requestOut) {
        ShimWarmup w = warmup;
        if (w != null) {
            w.ncclDataCall();
        }
        try {
            BridgedComm c = comms.get(recvComm, RECV);
            if (c == null) {
                return invalid("irecv", recvComm, "receive comm");
            }
            if (n < 1 || n > BridgedComm.MAX_SIZES) {
                throw NetException.internalError("irecv of " + n + " buffers");
            }
            MemorySegment[] buffers = c.recvData(n);
            int[] t = c.recvTags(n);
            MemoryHandle[] m = c.recvHandles(n);
            for (int i = 0; i < n; i++) {
                long mh = MEMORY.get(LONG, mhandles + 8L * i);
                Registration r = registrations.get(mh, REGISTRATION);
                if (r == null || r.owner != c) {
                    return invalid("irecv", mh, "memory handle of this receive comm");
                }
                SpiArrays.set(buffers, i, r.slice(MEMORY.get(LONG, data + 8L * i), MEMORY.get(LONG, sizes + 8L * i)));
                t[i] = MEMORY.get(INT, tags + 4L * i);
                SpiArrays.set(m, i, r.handle);
            }
            NetRequest q = plugin.irecv((RecvComm) c.comm, n, buffers, t, m);
            MEMORY.set(LONG, requestOut, q == null ? 0 : tracked(c, q, n));
            return 0;
        } catch (Throwable e) {
            return failed("irecv", e);
        }
    }

    public int iflush(long recvComm, int n, long data, long sizes, long mhandles, long requestOut) {
        try {
            BridgedComm c = comms.get(recvComm, RECV);
            if (c == null) {
                return invalid("iflush", recvComm, "receive comm");
            }
            if (n < 1 || n > BridgedComm.MAX_SIZES) {
                throw NetException.internalError("iflush of " + n + " buffers");
            }
            MemorySegment[] buffers = c.recvData(n);
            MemoryHandle[] m = c.recvHandles(n);
            for (int i = 0; i < n; i++) {
                long mh = MEMORY.get(LONG, mhandles + 8L * i);
                Registration r = registrations.get(mh, REGISTRATION);
                if (r == null || r.owner != c) {
                    return invalid("iflush", mh, "memory handle of this receive comm");
                }
                long bytes = Math.max(0, MEMORY.get(INT, sizes + 4L * i));
                SpiArrays.set(buffers, i, r.slice(MEMORY.get(LONG, data + 8L * i), bytes));
                SpiArrays.set(m, i, r.handle);
            }
            NetRequest q = plugin.iflush((RecvComm) c.comm, n, buffers, m);
            MEMORY.set(LONG, requestOut, q == null ? 0 : tracked(c, q, n));
            return 0;
        } catch (Throwable e) {
            return failed("iflush", e);
        }
    }

    private static long tracked(BridgedComm c, NetRequest q, int buffers) throws NetException {
        long h = c.track(q, buffers);
        if (h == 0) {
            throw NetException.internalError(BridgedComm.MAX_REQUESTS + " requests already in flight on one comm");
        }
        return h;
    }

    public int test(long request, long doneOut, long sizesOut) {
        BridgedComm c = BridgedComm.ofRequest(comms, request);
        NetRequest q = c == null ? null : c.request(request);
        if (q == null) {
            return invalid("test", request, "request in flight");
        }
        try {
            int[] s = c.sizes;
            if (plugin.test(q, sizesOut == 0 ? null : s)) {
                if (sizesOut != 0) {
                    int n = c.buffers(request);
                    for (int i = 0; i < n; i++) {
                        MEMORY.set(INT, sizesOut + 4L * i, s[i]);
                    }
                }
                c.release(request);
                MEMORY.set(INT, doneOut, 1);
            } else {
                MEMORY.set(INT, doneOut, 0);
            }
            return 0;
        } catch (Throwable e) {
            c.release(request);
            return failed("test", e);
        }
    }

    // ---- failures --------------------------------------------------------------------------------

    private int failed(String op, Throwable e) {
        if (e instanceof NetException n) {
            logger.warn("NET/%s: %s failed: %s", name, op, n);
            return n.result().code();
        }
        logger.warn("NET/%s: %s failed: %s (a bug in the transport or the bridge)", name, op, e);
        return NetResult.INTERNAL_ERROR.code();
    }

    private int invalid(String op, long handle, String what) {
        logger.warn("NET/%s: %s: %s is not a live %s", name, op, HandleTable.describe(handle), what);
        return NetResult.INVALID_ARGUMENT.code();
    }

    /** @return handles in use, for tests: comms, registrations, contexts */
    int[] live() {
        return new int[] {comms.size(), registrations.size(), contexts.size()};
    }
}

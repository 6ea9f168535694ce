package io.jccl.shim;

import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

import static io.jccl.shim.HandleTable.Kind.COLL;
import static io.jccl.shim.HandleTable.Kind.COLL_LISTEN;
import static io.jccl.shim.HandleTable.Kind.CONTEXT;
import static io.jccl.shim.HandleTable.Kind.REGISTRATION;
import static io.jccl.shim.ShimAbi.INT;
import static io.jccl.shim.ShimAbi.LONG;
import static io.jccl.shim.ShimAbi.MEMORY;

/**
 * The ncclCollNet operations, as {@link NetBridge} is for ncclNet: one upcall target per
 * {@link ShimAbi.CollNetOp}, no exception escaping, nothing allocated per {@code iallreduce} or
 * {@code test} in the steady state.
 *
 * <p>With no CollNet transport named ({@code JCCL_SHIM_COLLNET} unset), {@code init} succeeds and
 * {@code devices} reports 0: NCCL then runs without CollNet, as the ABI intends.
 */
final class CollNetBridge {
    private final String name;
    private final NetLogger logger;
    private final ClassLoader loader;
    private final HandleTable<BridgedComm> comms = new HandleTable<>();
    private final HandleTable<Registration> registrations = new HandleTable<>();
    private final HandleTable<Object> contexts = new HandleTable<>();
    private final PropertiesWriter properties = new PropertiesWriter();
    /** Set by the first init; read by every data call (volatile: NCCL's threads are not ours). */
    private volatile CollNetPlugin plugin;

    /** @param name the CollNet transport to serve; empty for none */
    CollNetBridge(String name, NetLogger logger, ClassLoader loader) {
        this.name = name;
        this.logger = logger;
        this.loader = loader;
    }

    public int init(long ctxOut, long commId, int apiVersion) {
        try {
            synchronized (this) {
                if (!name.isEmpty()) {
                    if (plugin == null) {
                        plugin = select();
                        logger.info(LogSubsystem.INIT | LogSubsystem.NET, "NET/JCCL: %s (%s) serves ncclCollNet v%d",
                                plugin.name(), plugin.getClass().getName(), apiVersion);
                    } else {
                        plugin.init(logger);
                    }
                }
                if (ctxOut != 0) {
                    MEMORY.set(LONG, ctxOut, contexts.add(commId, CONTEXT));
                }
            }
            return 0;
        } catch (Throwable e) {
            return failed("init", e);
        }
    }

    private CollNetPlugin select() throws NetException {
        List<CollNetPlugin> found = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        var it = ServiceLoader.load(CollNetPlugin.class, loader).iterator();
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
        CollNetPlugin chosen = found.stream().filter(p -> p.name().equalsIgnoreCase(name)).findFirst().orElse(null);
        if (chosen == null) {
            throw NetException.invalidUsage("no Java CollNet transport named " + name + " on the shim's class path "
                    + "(found: " + (found.isEmpty() ? "none" : String.join(", ",
                    found.stream().map(CollNetPlugin::name).toList()))
                    + (problems.isEmpty() ? "" : "; failed to load: " + String.join("; ", problems))
                    + "); set " + ShimConfig.JCCL_SHIM_COLLNET + " to one of them, or unset it");
        }
        String missing = RuntimeModules.problem(chosen.name() + " (" + chosen.getClass().getName() + ")", chosen.getClass());
        if (missing != null) {
            throw NetException.systemError(missing);
        }
        chosen.init(logger);
        return chosen;
    }

    public int finalizeContext(long ctx) {
        try {
            if (contexts.get(ctx, CONTEXT) == null) {
                return invalid("finalize", ctx, "context");
            }
            synchronized (this) {
                contexts.remove(ctx);
                // NCCL finalizes a communicator's context after closing its comms; the transport is
                // released when no communicator is left and no comm is open (a v6-v10 user has none).
                if (contexts.size() == 0 && comms.size() == 0 && plugin != null) {
                    plugin.close();
                }
            }
            return 0;
        } catch (Throwable e) {
            return failed("finalize", e);
        }
    }

    public int devices(long ndevOut) {
        try {
            CollNetPlugin p;
            synchronized (this) {
                p = plugin;
            }
            MEMORY.set(INT, ndevOut, p == null ? 0 : p.devices());
            return 0;
        } catch (Throwable e) {
            return failed("devices", e);
        }
    }

    public int getProperties(int dev, long propsOut) {
        try {
            properties.write(plugin().getProperties(dev), propsOut);
            return 0;
        } catch (Throwable e) {
            return failed("getProperties", e);
        }
    }

    private synchronized CollNetPlugin plugin() throws NetException {
        if (plugin == null) {
            throw NetException.internalError(name.isEmpty() ? "no CollNet transport is configured ("
                    + ShimConfig.JCCL_SHIM_COLLNET + " is unset)" : "called before init");
        }
        return plugin;
    }

    public int listen(long ctx, int dev, long handle, long listenCommOut) {
        try {
            ListenComm l = plugin().listen(dev, NetHandle.wrap(MEMORY.asSlice(handle, NetHandle.SIZE)));
            MEMORY.set(LONG, listenCommOut, comms.add(h -> new BridgedComm(l, COLL_LISTEN, h), COLL_LISTEN));
            return 0;
        } catch (Throwable e) {
            return failed("listen", e);
        }
    }

    public int connect(long handles, int nranks, int rank, long listenComm, long collCommOut) {
        try {
            BridgedComm l = comms.get(listenComm, COLL_LISTEN);
            if (l == null) {
                return invalid("connect", listenComm, "listen comm");
            }
            if (nranks < 1 || rank < 0 || rank >= nranks) {
                throw NetException.invalidArgument("connect of rank " + rank + " among " + nranks);
            }
            NetHandle[] all = new NetHandle[nranks];
            for (int i = 0; i < nranks; i++) {
                all[i] = NetHandle.wrap(MEMORY.asSlice(MEMORY.get(LONG, handles + 8L * i), NetHandle.SIZE));
            }
            CollComm c = plugin().connect(all, rank, (ListenComm) l.comm);
            MEMORY.set(LONG, collCommOut, comms.add(h -> new BridgedComm(c, COLL, h), COLL));
            return 0;
        } catch (Throwable e) {
            return failed("connect", e);
        }
    }

    public int reduceSupport(int dataType, int redOp, long supportedOut) {
        try {
            boolean supported;
            try {
                supported = plugin().reduceSupport(DataType.fromCode(dataType), ReduceOp.fromCode(redOp));
            } catch (IllegalArgumentException unknownToJava) {
                // A type or operation newer than the SPI: the transport cannot have promised it.
                supported = false;
            }
            MEMORY.set(INT, supportedOut, supported ? 1 : 0);
            return 0;
        } catch (Throwable e) {
            return failed("reduceSupport", e);
        }
    }

    public int regMr(long comm, long data, long size, int type, long mhandleOut) {
        try {
            BridgedComm c = comms.get(comm, COLL);
            if (c == null) {
                return invalid("regMr", comm, "collective comm");
            }
            MemorySegment region = MEMORY.asSlice(data, size);
            MemoryHandle mh = plugin().regMr((CollComm) c.comm, region, NetBridge.pointerType(type));
            MEMORY.set(LONG, mhandleOut, register(c, mh, region));
            return 0;
        } catch (Throwable e) {
            return failed("regMr", e);
        }
    }

    public int regMrDmaBuf(long comm, long data, long size, int type, long offset, int fd, long mhandleOut) {
        try {
            BridgedComm c = comms.get(comm, COLL);
            if (c == null) {
                return invalid("regMrDmaBuf", comm, "collective comm");
            }
            MemorySegment region = MEMORY.asSlice(data, size);
            MemoryHandle mh = plugin().regMrDmaBuf((CollComm) c.comm, region, NetBridge.pointerType(type), offset, fd);
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

    public int deregMr(long comm, long mhandle) {
        try {
            BridgedComm c = comms.get(comm, COLL);
            Registration r = registrations.get(mhandle, REGISTRATION);
            if (c == null || r == null || r.owner != c) {
                return invalid("deregMr", mhandle, "memory handle of comm " + HandleTable.describe(comm));
            }
            try {
                plugin().deregMr((CollComm) c.comm, r.handle);
            } finally {
                registrations.remove(mhandle);
                c.registrations.remove(r);
            }
            return 0;
        } catch (Throwable e) {
            return failed("deregMr", e);
        }
    }

    public int iallreduce(long comm, long sendData, long recvData, long count, int dataType, int redOp,
                          long sendMhandle, long recvMhandle, long requestOut) {
        try {
            BridgedComm c = comms.get(comm, COLL);
            if (c == null) {
                return invalid("iallreduce", comm, "collective comm");
            }
            Registration rs = registrations.get(sendMhandle, REGISTRATION);
            Registration rr = registrations.get(recvMhandle, REGISTRATION);
            if (rs == null || rr == null || rs.owner != c || rr.owner != c) {
                return invalid("iallreduce", rs == null || rs.owner != c ? sendMhandle : recvMhandle,
                        "memory handle of this collective comm");
            }
            DataType type;
            ReduceOp op;
            try {
                type = DataType.fromCode(dataType);
                op = ReduceOp.fromCode(redOp);
            } catch (IllegalArgumentException e) {
                throw NetException.invalidArgument(e.getMessage());
            }
            long bytes = Math.multiplyExact(count, type.size());
            NetRequest q = plugin.iallreduce((CollComm) c.comm, rs.slice(sendData, bytes), rr.slice(recvData, bytes),
                    count, type, op, rs.handle, rr.handle);
            MEMORY.set(LONG, requestOut, q == null ? 0 : tracked(c, q));
            return 0;
        } catch (Throwable e) {
            return failed("iallreduce", e);
        }
    }

    public int iflush(long comm, long data, int size, long mhandle, long requestOut) {
        try {
            BridgedComm c = comms.get(comm, COLL);
            Registration r = registrations.get(mhandle, REGISTRATION);
            if (c == null || r == null || r.owner != c) {
                return invalid("iflush", c == null ? comm : mhandle, c == null ? "collective comm"
                        : "memory handle of this collective comm");
            }
            NetRequest q = plugin.iflush((CollComm) c.comm, r.slice(data, Math.max(0, size)), r.handle);
            MEMORY.set(LONG, requestOut, q == null ? 0 : tracked(c, q));
            return 0;
        } catch (Throwable e) {
            return failed("iflush", e);
        }
    }

    private static long tracked(BridgedComm c, NetRequest q) throws NetException {
        long h = c.track(q, 1);
        if (h == 0) {
            throw NetException.internalError(BridgedComm.MAX_REQUESTS + " requests already in flight on one comm");
        }
        return h;
    }

    public int test(long request, long doneOut, long sizeOut) {
        BridgedComm c = BridgedComm.ofRequest(comms, request);
        NetRequest q = c == null ? null : c.request(request);
        if (q == null) {
            return invalid("test", request, "request in flight");
        }
        try {
            int[] s = c.sizes;
            if (plugin.test(q, sizeOut == 0 ? null : s)) {
                if (sizeOut != 0) {
                    MEMORY.set(INT, sizeOut, s[0]);
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

    public int closeColl(long collComm) {
        return close("closeColl", collComm, COLL);
    }

    public int closeListen(long listenComm) {
        return close("closeListen", listenComm, COLL_LISTEN);
    }

    private int close(String op, long handle, HandleTable.Kind kind) {
        BridgedComm c = comms.get(handle, kind);
        if (c == null) {
            return invalid(op, handle, kind == COLL ? "collective comm" : "listen comm");
        }
        try {
            if (kind == COLL) {
                plugin().closeColl((CollComm) c.comm);
            } else {
                plugin().closeListen((ListenComm) c.comm);
            }
            return 0;
        } catch (Throwable e) {
            return failed(op, e);
        } finally {
            for (Registration r : c.registrations) {
                registrations.remove(r.handleValue);
            }
            c.registrations.clear();
            comms.remove(handle);
        }
    }

    private int failed(String op, Throwable e) {
        String who = name.isEmpty() ? "JCCL CollNet" : name;
        if (e instanceof NetException n) {
            logger.warn("NET/%s: %s failed: %s", who, op, n);
            return n.result().code();
        }
        logger.warn("NET/%s: %s failed: %s (a bug in the transport or the bridge)", who, op, e);
        return NetResult.INTERNAL_ERROR.code();
    }

    private int invalid(String op, long handle, String what) {
        logger.warn("NET/%s: %s: %s is not a live %s", name.isEmpty() ? "JCCL CollNet" : name, op,
                HandleTable.describe(handle), what);
        return NetResult.INVALID_ARGUMENT.code();
    }
}

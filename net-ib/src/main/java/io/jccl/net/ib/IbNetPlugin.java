package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Verbs;
import io.jccl.spi.ListenComm;
import io.jccl.spi.LogLevel;
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

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * JcclIB: InfiniBand and RoCE through libibverbs, NCCL's IB design in Java (spec section 8).
 *
 * <p>Each active port of each HCA is a device. A connection is a set of RC queue pairs set up over a
 * TCP side channel that the handle points to and that stays open to watch the peer. The receiver
 * announces each receive by RDMA-writing its buffers' addresses into the sender's clear-to-send
 * FIFO; the sender RDMA-writes the data straight into them and completes with
 * RDMA_WRITE_WITH_IMM carrying the size. See {@link IbSendComm} and {@link IbRecvComm}.
 *
 * <p>Where the hardware is missing, {@link #init} throws with {@link #unavailabilityCause()}'s
 * reason, and discovery moves on to the next transport.
 */
public final class IbNetPlugin implements NetPlugin {
    /** The name {@code NCCL_NET} selects. */
    public static final String NAME = "JcclIB";

    private static final SecureRandom RANDOM = new SecureRandom();
    private static volatile Throwable probedCause;
    private static volatile boolean probed;

    private final SwitchableLogger logger = new SwitchableLogger();
    private final Map<Long, ConnectHandshake> connecting = new ConcurrentHashMap<>();
    private final long instanceId = RANDOM.nextInt() & 0xffffffffL;
    private final AtomicLong connectIds = new AtomicLong();
    private final Set<IbListenComm> listens = ConcurrentHashMap.newKeySet();
    private volatile IbConfig config;
    private volatile List<IbDevice> devices;
    private volatile PeerWatch peerWatch;

    /** Does nothing: discovery instantiates every provider. */
    public IbNetPlugin() {
    }

    /**
     * @return whether libibverbs loads and at least one active port is usable here (probed once per
     *         process, with the current configuration)
     */
    public static boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /**
     * @return why JcclIB cannot run here (no libibverbs, no device, no active port, a bad
     *         {@code NCCL_IB_*} value), or {@code null} if it can
     */
    public static Throwable unavailabilityCause() {
        if (!probed) {
            synchronized (IbNetPlugin.class) {
                if (!probed) {
                    Throwable cause = Verbs.unavailabilityCause();
                    if (cause == null) {
                        IbNetPlugin p = new IbNetPlugin();
                        try {
                            p.init(NetLogger.noop());
                        } catch (NetException | RuntimeException e) {
                            cause = e;
                        } finally {
                            p.close();
                        }
                    }
                    probedCause = cause;
                    probed = true;
                }
            }
        }
        return probedCause;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public synchronized void init(NetLogger log) throws NetException {
        logger.target = log;
        if (devices != null) {
            return;
        }
        IbConfig c;
        try {
            c = IbConfig.fromEnvironment();
        } catch (IllegalArgumentException e) {
            throw NetException.invalidUsage("JcclIB: " + e.getMessage());
        }
        List<IbDevice> found = DeviceDiscovery.discover(c, logger);
        try {
            peerWatch = new PeerWatch(logger);
        } catch (java.io.IOException e) {
            closeDevices(found);
            throw NetException.systemError("JcclIB: cannot open a selector for the side channels: " + e.getMessage(), e);
        }
        config = c;
        devices = found;
        logger.info(LogSubsystem.INIT | LogSubsystem.NET, "NET/JcclIB : using %s on %d device(s) (%s)",
                Verbs.library(), found.size(), found);
    }

    private List<IbDevice> initialized() throws NetException {
        List<IbDevice> d = devices;
        if (d == null) {
            throw NetException.internalError("JcclIB: init has not succeeded");
        }
        return d;
    }

    private IbDevice device(int dev) throws NetException {
        List<IbDevice> d = initialized();
        if (dev < 0 || dev >= d.size()) {
            throw NetException.invalidArgument("JcclIB: device " + dev + " out of range [0, " + d.size() + ")");
        }
        return d.get(dev);
    }

    @Override
    public int devices() throws NetException {
        return initialized().size();
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        return device(dev).properties();
    }

    // ---- connection set-up ----

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        IbDevice d = device(dev);
        d.hca().checkUsable();
        IbListenComm l = new IbListenComm(d, config, logger, peerWatch);
        IbHandle.write(handle, l.address(), l.secret());
        listens.add(l);
        logger.info(LogSubsystem.NET, "NET/JcclIB : listening on %s for %s", l.address(), d.uniqueName());
        return l;
    }

    @Override
    public SendComm connect(int dev, NetHandle handle) throws NetException {
        IbDevice d = device(dev);
        long id = IbHandle.resumeId(handle);
        ConnectHandshake h = id == 0 ? null : connecting.get(id);
        if (h == null) {
            IbHandle.Target target = IbHandle.read(handle);
            d.hca().checkUsable();
            h = new ConnectHandshake(d, config, logger, target, peerWatch);
            id = (instanceId << 32) | (connectIds.incrementAndGet() & 0xffffffffL);
            connecting.put(id, h);
            IbHandle.setResumeId(handle, id);
        }
        IbSendComm comm;
        try {
            comm = h.step();
        } catch (NetException | RuntimeException e) {
            connecting.remove(id);
            IbHandle.setResumeId(handle, 0);
            throw e;
        }
        if (comm != null) {
            connecting.remove(id);
            IbHandle.setResumeId(handle, 0);
            logger.info(LogSubsystem.NET, "NET/JcclIB : connected to %s over %d queue pair(s)", comm.peerName(),
                    comm.qps.length);
        }
        return comm;
    }

    @Override
    public RecvComm accept(ListenComm listenComm) throws NetException {
        if (!(listenComm instanceof IbListenComm l)) {
            throw NetException.invalidArgument("JcclIB: not a JcclIB listen comm: " + listenComm);
        }
        IbRecvComm comm = l.accept();
        if (comm != null) {
            logger.info(LogSubsystem.NET, "NET/JcclIB : accepted %s over %d queue pair(s)", comm.peerName(),
                    comm.qps.length);
        }
        return comm;
    }

    // ---- memory ----

    @Override
    public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
        IbComm c = comm(comm);
        if (type != PointerType.HOST) {
            throw NetException.invalidUsage("JcclIB registers host memory only (ptrSupport HOST); " + type
                    + " memory needs GPUDirect RDMA, which comes with GPU support");
        }
        if (!data.isNative()) {
            throw NetException.invalidArgument("JcclIB: regMr needs native memory (an Arena segment), not a heap "
                    + "segment");
        }
        try {
            RegistrationCache.Registration r = c.hca.registrations.acquire(data.address(), data.byteSize());
            return new IbMemoryHandle(c.hca, r, data.address(), data.byteSize(), type);
        } catch (NetException e) {
            throw e;
        } catch (Exception e) {
            throw NetException.systemError("JcclIB: " + e.getMessage(), e);
        }
    }

    @Override
    public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
        IbComm c = comm(comm);
        if (!(mhandle instanceof IbMemoryHandle mh) || mh.hca != c.hca) {
            throw NetException.invalidArgument("JcclIB: deregMr of a handle this comm's device did not issue: "
                    + mhandle);
        }
        synchronized (mh) {
            if (mh.released) {
                throw NetException.invalidArgument("JcclIB: deregMr of a handle already released: " + mh);
            }
            mh.released = true;
        }
        try {
            c.hca.registrations.release(mh.registration);
        } catch (Exception e) {
            throw NetException.systemError("JcclIB: " + e.getMessage(), e);
        }
    }

    private static IbComm comm(NetComm comm) throws NetException {
        if (comm instanceof IbComm c) {
            return c;
        }
        throw NetException.invalidArgument("JcclIB: not a JcclIB comm: " + comm);
    }

    // ---- data ----

    @Override
    public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        if (!(comm instanceof IbSendComm c) || !(mhandle instanceof IbMemoryHandle mh)) {
            throw NetException.invalidArgument("JcclIB: isend needs a JcclIB send comm and memory handle");
        }
        return c.isend(data, tag, mh);
    }

    @Override
    public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException {
        if (!(comm instanceof IbRecvComm c)) {
            throw NetException.invalidArgument("JcclIB: irecv needs a JcclIB receive comm");
        }
        return c.irecv(n, data, tags, mhandles);
    }

    @Override
    public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles) throws NetException {
        if (!(comm instanceof IbRecvComm c)) {
            throw NetException.invalidArgument("JcclIB: iflush needs a JcclIB receive comm");
        }
        return c.iflush(n, data, mhandles);
    }

    @Override
    public boolean test(NetRequest request, int[] sizes) throws NetException {
        return switch (request) {
            case SendRequest r -> r.comm.test(r, sizes);
            case RecvRequest r -> r.comm.test(r, sizes);
            case FlushRequest r -> r.comm.test(r);
            case null, default -> throw NetException.invalidArgument("JcclIB: not a JcclIB request: " + request);
        };
    }

    // ---- close ----

    @Override
    public void closeSend(SendComm comm) throws NetException {
        comm(comm).close();
    }

    @Override
    public void closeRecv(RecvComm comm) throws NetException {
        comm(comm).close();
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        if (!(comm instanceof IbListenComm l)) {
            throw NetException.invalidArgument("JcclIB: not a JcclIB listen comm: " + comm);
        }
        listens.remove(l);
        l.close();
    }

    /** Closes the devices: stops their async-event threads, releases cached registrations. */
    @Override
    public synchronized void close() {
        for (ConnectHandshake h : connecting.values()) {
            h.abort();
        }
        connecting.clear();
        for (IbListenComm l : listens) {
            l.close();
        }
        listens.clear();
        PeerWatch w = peerWatch;
        peerWatch = null;
        if (w != null) {
            w.close();
        }
        List<IbDevice> d = devices;
        devices = null;
        if (d != null) {
            closeDevices(d);
        }
    }

    private static void closeDevices(List<IbDevice> d) {
        Set<Hca> hcas = new LinkedHashSet<>();
        for (IbDevice dev : d) {
            hcas.add(dev.hca());
        }
        for (Hca h : hcas) {
            h.close();
        }
    }

    /** @return the configuration read by {@link #init}, for tests and tools */
    IbConfig config() {
        return config;
    }

    /** @return the devices found by {@link #init}, for tests and tools */
    List<IbDevice> devicesForTest() {
        return devices;
    }

    /** The logger handed to the latest {@code init}: every later init may replace it. */
    private static final class SwitchableLogger implements NetLogger {
        volatile NetLogger target = NetLogger.noop();

        @Override
        public void log(LogLevel level, long subsystems, String message) {
            target.log(level, subsystems, message);
        }

        @Override
        public boolean isEnabled(LogLevel level, long subsystems) {
            return target.isEnabled(level, subsystems);
        }
    }

    @Override
    public String toString() {
        List<IbDevice> d = devices;
        return NAME + (d == null ? "" : new ArrayList<>(d).toString());
    }
}

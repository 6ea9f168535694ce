package io.jccl.net.socket;

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
import io.jccl.spi.PointerType;
import io.jccl.spi.config.Env;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.nio.channels.NetworkChannel;
import java.nio.channels.ServerSocketChannel;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * JcclSocket: NCCL's ncclNet contract over TCP. See the package documentation for the design and
 * {@link SocketConfig} for its variables.
 */
public final class SocketNetPlugin implements NetPlugin {
    /** The name {@code NCCL_NET} selects; distinct from NCCL's internal {@code Socket}. */
    public static final String NAME = "JcclSocket";

    private static final SecureRandom SECRETS = new SecureRandom();
    /** Whether module jdk.net is in the layer JcclSocket runs in (the boot layer on the class path). */
    private static final boolean JDK_NET = jdkNetPresent();
    /** Never started: a thread that owns no arena, to ask whether memory is confined to its owner. */
    private static final Thread SOME_OTHER_THREAD = new Thread(() -> { }, "jccl-socket-access-probe");

    private volatile NetLogger logger = NetLogger.noop();
    private volatile SocketConfig.Settings settings;
    /** Bounds the I/O threads of this plugin's comms together; set at init. */
    private volatile IoThreadBudget ioThreads = new IoThreadBudget(0);
    /** Why device memory is not taken (ptrSupport HOST only), or null when it is. */
    private volatile String noDeviceMemory = "not initialised";
    private volatile List<SocketDevice> devices;
    /** Connections being made, by the cookie their handle carries. */
    private final Map<Long, PendingConnect> pendingConnects = new ConcurrentHashMap<>();
    /** Whether the INFO line about a runtime without jdk.net was written (once per plugin is enough). */
    private volatile boolean keepAliveFallbackLogged;
    /** Heartbeats of every comm; started with the first connection. */
    private LivenessWatch livenessWatch;

    /** Found by ServiceLoader; does no work until {@link #init}. */
    public SocketNetPlugin() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /**
     * The CUDA binding is a dependency of this jar, but a class path of hand-picked jars (a shim
     * package of jccl-spi and jccl-net-socket only) may lack it: TCP must still work there.
     *
     * @return null when io.jccl.cuda can be loaded, else why device memory is off (for the log)
     */
    private static String cudaBindingAbsent() {
        try {
            Class.forName("io.jccl.cuda.Cuda", false, SocketNetPlugin.class.getClassLoader());
            return null;
        } catch (ClassNotFoundException | LinkageError e) {
            return "the CUDA binding (jccl-cuda) is not on the class path";
        }
    }

    @Override
    public synchronized void init(NetLogger log) throws NetException {
        logger = log;
        if (devices != null) {
            return;
        }
        SocketConfig.Settings s;
        String noCuda;
        List<SocketDevice> found;
        try {
            s = SocketConfig.fromEnvironment();
            noCuda = cudaBindingAbsent();
            if (noCuda == null) {
                noCuda = DeviceStaging.unavailability(Env.getBoolean(SocketConfig.JCCL_SOCKET_CUDA, true));
            }
            found = SocketDevices.discover(s, noCuda == null);
        } catch (IllegalArgumentException e) {
            throw NetException.invalidUsage("JcclSocket: " + e.getMessage());
        } catch (SocketException e) {
            throw NetException.systemError("JcclSocket cannot list network interfaces: " + e.getMessage(), e);
        }
        if (found.isEmpty()) {
            throw NetException.systemError("JcclSocket found no usable interface"
                    + (s.interfaces() == null ? "" : " matching NCCL_SOCKET_IFNAME=" + s.interfaces())
                    + (s.family() == 0 ? "" : " with an IPv" + s.family() + " address"));
        }
        settings = s;
        ioThreads = new IoThreadBudget(s.ioThreadLimit());
        noDeviceMemory = noCuda;
        devices = found;
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < found.size(); i++) {
            SocketDevice d = found.get(i);
            list.append(" [").append(i).append("]").append(d.interfaceName()).append(':')
                    .append(d.address().getHostAddress());
        }
        log.info(LogSubsystem.NET | LogSubsystem.INIT, "NET/JcclSocket: using%s; %d data streams and %d I/O threads "
                + "per connection (%s), %s; %s; %s; %s", list, s.streams(), s.threads(), s.layoutReason(),
                s.receiveBuffer() == 0 ? "the kernel's autotuned receive buffers"
                        : "SO_RCVBUF " + s.receiveBuffer() + " (" + SocketConfig.NCCL_SOCKET_RCVBUF + ")",
                s.ioThreadLimit() == 0 ? "no bound on all connections' I/O threads"
                        : "at most " + s.ioThreadLimit() + " I/O threads for all connections together (JCCL_SOCKET_IO_THREADS)",
                noCuda == null
                ? "CUDA device memory staged through pinned host mirrors (ptrSupport HOST|CUDA)"
                : "host memory only: " + noCuda,
                !s.nativeIo() ? "control streams through NIO (" + SocketConfig.JCCL_SOCKET_NATIVE_IO + "=0)"
                : NativeSocketIo.isAvailable() ? "control streams through direct send/recv calls"
                : "control streams through NIO: " + NativeSocketIo.unavailabilityCause().getMessage());
    }

    private static boolean jdkNetPresent() {
        ModuleLayer layer = SocketNetPlugin.class.getModule().getLayer();
        return (layer != null ? layer : ModuleLayer.boot()).findModule("jdk.net").isPresent();
    }

    IoThreadBudget ioThreads() {
        return ioThreads;
    }

    NetLogger logger() {
        return logger;
    }

    /** @return the heartbeat thread of this plugin's comms, started on first use */
    synchronized LivenessWatch livenessWatch() throws NetException {
        if (livenessWatch == null) {
            try {
                livenessWatch = new LivenessWatch(logger, settings.heartbeatInterval().toNanos());
            } catch (IOException e) {
                throw NetException.systemError("JcclSocket cannot open a selector for its heartbeats: " + e.getMessage(), e);
            }
        }
        return livenessWatch;
    }

    @Override
    public int devices() throws NetException {
        return initialised().size();
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        return device(dev).properties();
    }

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        SocketDevice device = device(dev);
        SocketConfig.Settings s = settings;
        ServerSocketChannel server = null;
        try {
            server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress(device.address(), 0), 4096);
            server.configureBlocking(false);
            InetSocketAddress bound = (InetSocketAddress) server.getLocalAddress();
            byte[] secret = new byte[SocketHandle.SECRET_BYTES];
            SECRETS.nextBytes(secret);
            SocketHandle.write(handle, bound, secret, s.streams(), s.threads(), s.minChunkBytes());
            logger.info(LogSubsystem.NET, "NET/JcclSocket: listening on %s:%d (%s)", bound.getAddress().getHostAddress(),
                    bound.getPort(), device.interfaceName());
            return new SocketListenComm(this, s, server, secret, bound);
        } catch (IOException e) {
            if (server != null) {
                try {
                    server.close();
                } catch (IOException ignored) {
                    // Already failing; the bind error is what matters.
                }
            }
            throw NetException.systemError("JcclSocket cannot listen on " + device.interfaceName() + " ("
                    + device.address().getHostAddress() + "): " + e.getMessage(), e);
        }
    }

    @Override
    public SendComm connect(int dev, NetHandle handle) throws NetException {
        device(dev);
        SocketHandle.Contents target = SocketHandle.read(handle);
        long cookie = SocketHandle.cookie(handle);
        PendingConnect pending = cookie == 0 ? null : pendingConnects.get(cookie);
        if (pending == null) {
            pending = new PendingConnect(this, settings, target);
            do {
                cookie = ThreadLocalRandom.current().nextLong();
            } while (cookie == 0 || pendingConnects.putIfAbsent(cookie, pending) != null);
            SocketHandle.setCookie(handle, cookie);
        }
        SocketSendComm comm;
        try {
            comm = pending.progress();
        } catch (NetException e) {
            pendingConnects.remove(cookie);
            SocketHandle.setCookie(handle, 0);
            throw e;
        }
        if (comm != null) {
            pendingConnects.remove(cookie);
            SocketHandle.setCookie(handle, 0);
            logger.info(LogSubsystem.NET, "NET/JcclSocket: connected to %s (%d data streams)", comm.peer,
                    comm.streams.length);
        }
        return comm;
    }

    @Override
    public RecvComm accept(ListenComm listenComm) throws NetException {
        return listener(listenComm).accept();
    }

    @Override
    public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
        if (type == PointerType.CUDA && noDeviceMemory == null) {
            if (!data.isNative()) {
                throw NetException.invalidArgument("JcclSocket: a CUDA registration needs a native segment at the "
                        + "device address");
            }
            return comm(comm).registerDevice(data);
        }
        if (type != PointerType.HOST) {
            throw NetException.invalidUsage("JcclSocket moves host memory only here (ptrSupport HOST: "
                    + noDeviceMemory + "); cannot register " + type + " memory: use a GPU-capable transport, or stage "
                    + "through host buffers");
        }
        if (!data.isNative()) {
            throw NetException.invalidArgument("JcclSocket registers native memory only (allocate it from an Arena)");
        }
        if (!data.isAccessibleBy(SOME_OTHER_THREAD)) {
            throw NetException.invalidArgument("JcclSocket needs memory any thread may access (a global, shared or "
                    + "automatic arena), not a confined one: its I/O threads move the bytes");
        }
        return comm(comm).register(data);
    }

    @Override
    public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
        MemoryRegion r = regionOf(comm(comm), mhandle);
        r.release();
    }

    /**
     * @return the registration, checked to belong to {@code comm} and to be still registered
     */
    MemoryRegion regionOf(SocketComm comm, MemoryHandle mhandle) throws NetException {
        if (!(mhandle instanceof MemoryRegion r) || r.owner != comm) {
            throw NetException.invalidArgument("memory handle " + mhandle + " was not registered on this JcclSocket comm");
        }
        if (r.isReleased()) {
            throw NetException.invalidArgument("memory handle was already deregistered");
        }
        return r;
    }

    @Override
    public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        if (!(comm instanceof SocketSendComm c)) {
            throw NetException.invalidArgument("not a JcclSocket send comm: " + comm);
        }
        return c.isend(data, tag, mhandle);
    }

    @Override
    public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException {
        if (!(comm instanceof SocketRecvComm c)) {
            throw NetException.invalidArgument("not a JcclSocket receive comm: " + comm);
        }
        return c.irecv(n, data, tags, mhandles);
    }

    /** Host memory needs no flush: always complete. */
    @Override
    public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles) throws NetException {
        if (!(comm instanceof SocketRecvComm c)) {
            throw NetException.invalidArgument("not a JcclSocket receive comm: " + comm);
        }
        c.checkUsable();
        return null;
    }

    @Override
    public boolean test(NetRequest request, int[] sizes) throws NetException {
        if (request instanceof SendRequest s) {
            return ((SocketSendComm) s.comm).test(s, sizes);
        }
        if (request instanceof RecvRequest r) {
            return ((SocketRecvComm) r.comm).test(r, sizes);
        }
        throw NetException.invalidArgument("not a JcclSocket request: " + request);
    }

    @Override
    public void closeSend(SendComm comm) throws NetException {
        comm((NetComm) comm).close();
    }

    @Override
    public void closeRecv(RecvComm comm) throws NetException {
        comm((NetComm) comm).close();
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        listener(comm).close();
    }

    @Override
    public void close() {
        pendingConnects.values().forEach(PendingConnect::abandon);
        pendingConnects.clear();
        synchronized (this) {
            if (livenessWatch != null) {
                livenessWatch.close();
                livenessWatch = null;
            }
        }
    }

    /** Socket options of every connection: no Nagle, keep-alive probes sized to the failure bound. */
    void configure(NetworkChannel c) throws IOException {
        SocketConfig.Settings s = settings;
        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
        c.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        if (JDK_NET) {
            KeepAliveTuning.apply(c, s.timeout());
        } else if (!keepAliveFallbackLogged) {
            keepAliveFallbackLogged = true;
            logger.info(LogSubsystem.NET | LogSubsystem.INIT, "NET/JcclSocket: module jdk.net is not in this Java "
                    + "runtime, so TCP keep-alive keeps the kernel's timing (SO_KEEPALIVE only); failure detection "
                    + "does not depend on it (heartbeats)");
        }
        if (s.sendBuffer() > 0) {
            c.setOption(StandardSocketOptions.SO_SNDBUF, s.sendBuffer());
        }
        if (s.receiveBuffer() > 0) {
            c.setOption(StandardSocketOptions.SO_RCVBUF, s.receiveBuffer());
        }
    }

    private List<SocketDevice> initialised() throws NetException {
        List<SocketDevice> d = devices;
        if (d == null) {
            throw NetException.internalError("JcclSocket used before init");
        }
        return d;
    }

    private SocketDevice device(int dev) throws NetException {
        List<SocketDevice> d = initialised();
        if (dev < 0 || dev >= d.size()) {
            throw NetException.invalidArgument("JcclSocket has no device " + dev + " (it has " + d.size() + ")");
        }
        return d.get(dev);
    }

    private static SocketComm comm(NetComm comm) throws NetException {
        if (!(comm instanceof SocketComm c)) {
            throw NetException.invalidArgument("not a JcclSocket comm: " + comm);
        }
        return c;
    }

    private static SocketListenComm listener(ListenComm comm) throws NetException {
        if (!(comm instanceof SocketListenComm l)) {
            throw NetException.invalidArgument("not a JcclSocket listen comm: " + comm);
        }
        return l;
    }
}

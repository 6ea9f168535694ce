package io.jccl.net.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.InterfaceFilter;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;

/**
 * JcclCollNet: in-network reduction done in software by an aggregator that plays the switch
 * ({@link Aggregator}). Each rank sends its data to the aggregator once and receives the result
 * once, pipelined in chunks, where a ring moves {@code 2(n-1)/n} times the data through every
 * rank. The aggregator runs as a thread of one rank of the group ({@code JCCL_COLLNET_AGGREGATOR=rank:K},
 * the default rank:0) or as a process of its own ({@code host:port}, {@code jccl collnet-aggregator}).
 *
 * <p>Host memory only (like the first SHARP versions for CPU buffers). Sum, prod, max and min over
 * every type but the 8-bit floats. A rank or aggregator that dies, closes or stops sending
 * heartbeats for {@code JCCL_COLLNET_TIMEOUT_MS} fails every pending request of its group.
 */
public final class JcclCollNetPlugin implements CollNetPlugin {
    private static final int MAX_COMMS = 65_536;
    private static final int DEFAULT_SPEED_MBPS = 10_000;

    private final SecureRandom random = new SecureRandom();
    private NetLogger log = NetLogger.noop();
    private CollNetConfig.Settings settings;
    private InetAddress localAddress;
    private NetProperties device;
    private boolean initialised;

    @Override
    public String name() {
        return "JcclCollNet";
    }

    @Override
    public synchronized void init(NetLogger logger) throws NetException {
        if (initialised) {
            return;
        }
        log = logger;
        try {
            settings = CollNetConfig.fromEnvironment();
        } catch (IllegalArgumentException e) {
            throw NetException.invalidArgument("JcclCollNet: " + e.getMessage());
        }
        CollNetConfig.Placement p = settings.placement();
        if (p == null) {
            log.info(LogSubsystem.INIT | LogSubsystem.NET, "JcclCollNet: %s=off: no devices",
                    CollNetConfig.JCCL_COLLNET_AGGREGATOR);
        } else if (p.inRank()) {
            localAddress = InterfaceFilter.firstAddress(Env.get(InterfaceFilter.NCCL_SOCKET_IFNAME), 0);
            if (localAddress == null) {
                log.info(LogSubsystem.INIT | LogSubsystem.NET, "JcclCollNet: no interface matches %s: no devices",
                        InterfaceFilter.NCCL_SOCKET_IFNAME);
            } else {
                device = properties("collnet-" + interfaceName(localAddress));
            }
        } else {
            device = properties("collnet-aggregator-" + p.address().getHostString() + ":" + p.address().getPort());
        }
        if (device != null) {
            log.info(LogSubsystem.INIT | LogSubsystem.NET, "JcclCollNet: device %s, aggregator %s, chunks of %d bytes, "
                    + "%d in flight, failure bound %d ms", device.name(), p.inRank() ? "a thread of rank " + p.rank()
                    : "the process at " + p.address(), settings.chunkBytes(), settings.window(), settings.timeoutMs());
        }
        initialised = true;
    }

    private static NetProperties properties(String name) {
        return NetProperties.builder(name).speedMbps(DEFAULT_SPEED_MBPS).ptrSupport(PointerType.HOST.mask())
                .maxComms(MAX_COMMS).maxRecvs(1).build();
    }

    private static String interfaceName(InetAddress a) {
        try {
            NetworkInterface nif = NetworkInterface.getByInetAddress(a);
            return nif != null ? nif.getName() : a.getHostAddress();
        } catch (IOException e) {
            return a.getHostAddress();
        }
    }

    private void checkInit() throws NetException {
        if (!initialised) {
            throw NetException.invalidUsage("JcclCollNet: call init first");
        }
    }

    @Override
    public synchronized int devices() throws NetException {
        checkInit();
        return device == null ? 0 : 1;
    }

    @Override
    public synchronized NetProperties getProperties(int dev) throws NetException {
        checkDevice(dev);
        return device;
    }

    private void checkDevice(int dev) throws NetException {
        checkInit();
        if (device == null || dev != 0) {
            throw NetException.invalidArgument("JcclCollNet has no device " + dev + " (it has " + devices() + ")");
        }
    }

    /** The listen side: a server socket on every rank (used on the aggregator's rank), the handle's contents. */
    private static final class Listen implements ListenComm {
        final ServerSocketChannel server;
        final CollNetHandle handle;
        boolean handedToAggregator;

        Listen(ServerSocketChannel server, CollNetHandle handle) {
            this.server = server;
            this.handle = handle;
        }
    }

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        CollNetConfig.Placement p;
        synchronized (this) {
            checkDevice(dev);
            p = settings.placement();
        }
        byte[] nonce = new byte[16];
        random.nextBytes(nonce);
        if (!p.inRank()) {
            CollNetHandle h = new CollNetHandle(false, -1, p.address(), p.secret(), nonce);
            h.writeTo(handle);
            return new Listen(null, h);
        }
        byte[] secret = new byte[16];
        random.nextBytes(secret);
        ServerSocketChannel server = null;
        try {
            server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress(localAddress, 0), 512);
            CollNetHandle h = new CollNetHandle(true, p.rank(), (InetSocketAddress) server.getLocalAddress(), secret,
                    nonce);
            h.writeTo(handle);
            return new Listen(server, h);
        } catch (IOException e) {
            closeQuietly(server);
            throw NetException.systemError("JcclCollNet: cannot listen on " + localAddress + ": " + e.getMessage(), e);
        }
    }

    @Override
    public CollComm connect(NetHandle[] handles, int rank, ListenComm listenComm) throws NetException {
        checkInit();
        if (handles == null || handles.length == 0 || rank < 0 || rank >= handles.length) {
            throw NetException.invalidArgument("connect: rank " + rank + " of " + (handles == null ? 0 : handles.length)
                    + " handles");
        }
        if (!(listenComm instanceof Listen listen)) {
            throw NetException.invalidArgument("connect: " + listenComm + " is not a JcclCollNet listen comm");
        }
        CollNetHandle[] h = new CollNetHandle[handles.length];
        for (int r = 0; r < handles.length; r++) {
            h[r] = CollNetHandle.readFrom(handles[r], r);
            if (!h[r].samePlacement(h[0])) {
                throw NetException.invalidUsage("JcclCollNet: ranks 0 and " + r + " disagree on where the aggregator "
                        + "runs: set " + CollNetConfig.JCCL_COLLNET_AGGREGATOR + " (and " + CollNetConfig.JCCL_COLLNET_SECRET
                        + ") alike on every rank");
            }
        }
        if (!java.util.Arrays.equals(h[rank].nonce(), listen.handle.nonce())) {
            throw NetException.invalidArgument("connect: rank " + rank + "'s handle is not the one its listen comm wrote");
        }
        int n = handles.length;
        InetSocketAddress target;
        byte[] secret;
        Aggregator hosted = null;
        if (h[0].inRank()) {
            int k = h[0].aggregatorRank();
            if (k >= n) {
                throw NetException.invalidUsage("JcclCollNet: " + CollNetConfig.JCCL_COLLNET_AGGREGATOR + "=rank:" + k
                        + " but the group has " + n + " ranks");
            }
            target = h[k].address();
            secret = h[k].secret();
            if (rank == k) {
                hosted = Aggregator.start(listen.server, secret, settings, log, true);
                listen.handedToAggregator = true;
            }
        } else {
            target = h[0].address();
            secret = h[0].secret();
        }
        long deadline = System.nanoTime() + settings.timeoutMs() * 1_000_000;
        SocketChannel data = null;
        SocketChannel beat = null;
        try {
            data = join(target, Wire.KIND_DATA, secret, h[0].nonce(), n, rank, deadline);
            beat = join(target, Wire.KIND_HEARTBEAT, secret, h[0].nonce(), n, rank, deadline);
            Wire.Answer a = Wire.readAnswer(data, deadline);
            Wire.Answer b = Wire.readAnswer(beat, deadline);
            Wire.Answer refusal = a.status() != 0 ? a : b.status() != 0 ? b : null;
            if (refusal != null) {
                throw NetException.remoteError("JcclCollNet: the aggregator at " + target + " refused rank " + rank + ": "
                        + refusal.text());
            }
            data.setOption(StandardSocketOptions.TCP_NODELAY, true);
            beat.configureBlocking(true);
            log.info(LogSubsystem.INIT | LogSubsystem.NET, "JcclCollNet: rank %d of %d joined the aggregator at %s",
                    rank, n, target);
            return new CollNetComm(rank, target.toString(), data, beat, a.chunkBytes(), a.window(), settings.timeoutMs(),
                    settings.heartbeatMs(), hosted);
        } catch (IOException e) {
            closeQuietly(data);
            closeQuietly(beat);
            if (hosted != null) {
                hosted.close("rank " + rank + " could not join its own aggregator");
            }
            throw NetException.remoteError("JcclCollNet: rank " + rank + " of " + n + " could not join the aggregator at "
                    + target + " within " + settings.timeoutMs() + " ms: " + e.getMessage(), e);
        } catch (NetException e) {
            closeQuietly(data);
            closeQuietly(beat);
            if (hosted != null) {
                hosted.close("rank " + rank + " could not join its own aggregator");
            }
            throw e;
        }
    }

    /** Connects (retrying a refused connect until the deadline) and sends the hello; non-blocking after. */
    private static SocketChannel join(InetSocketAddress target, int kind, byte[] secret, byte[] group, int n, int rank,
                                      long deadline) throws IOException {
        IOException last = null;
        long pause = 10;
        while (System.nanoTime() - deadline < 0) {
            SocketChannel ch = SocketChannel.open();
            try {
                long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
                ch.socket().connect(target, (int) Math.min(left, Integer.MAX_VALUE));
                ch.configureBlocking(false);
                ByteBuffer hello = Wire.hello(kind, secret, group, n, rank);
                Wire.writeFully(ch, hello, deadline, "the hello");
                return ch;
            } catch (IOException e) {
                closeQuietly(ch);
                last = e;
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", ie);
                }
                pause = Math.min(500, pause * 2);
            }
        }
        throw last != null ? last : new IOException("no time left to connect");
    }

    private static void closeQuietly(java.nio.channels.Channel c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                // Closing on an error path only has to release it.
            }
        }
    }

    @Override
    public boolean reduceSupport(DataType dataType, ReduceOp op) {
        return dataType != null && op != null && Reductions.supports(dataType, op);
    }

    private static CollNetComm comm(CollComm comm) throws NetException {
        if (!(comm instanceof CollNetComm c)) {
            throw NetException.invalidArgument(comm + " is not a JcclCollNet comm");
        }
        return c;
    }

    @Override
    public MemoryHandle regMr(CollComm comm, MemorySegment data, PointerType type) throws NetException {
        if (type != PointerType.HOST) {
            throw NetException.invalidUsage("JcclCollNet registers host memory only (its ptrSupport is HOST), not "
                    + type);
        }
        if (data == null) {
            throw NetException.invalidArgument("regMr: data must not be null");
        }
        return comm(comm).register(data);
    }

    @Override
    public void deregMr(CollComm comm, MemoryHandle mhandle) throws NetException {
        comm(comm).deregister(mhandle);
    }

    @Override
    public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                 DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
            throws NetException {
        return comm(comm).iallreduce(sendData, recvData, count, dataType, op, sendMhandle, recvMhandle);
    }

    @Override
    public NetRequest iflush(CollComm comm, MemorySegment data, MemoryHandle mhandle) throws NetException {
        comm(comm);
        return null;
    }

    @Override
    public boolean test(NetRequest request, int[] size) throws NetException {
        if (!(request instanceof CollNetComm.Request q)) {
            throw NetException.invalidArgument("test: " + request + " is not a JcclCollNet request");
        }
        return q.comm.test(q, size);
    }

    @Override
    public void closeColl(CollComm comm) throws NetException {
        comm(comm).close();
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        if (!(comm instanceof Listen l)) {
            throw NetException.invalidArgument(comm + " is not a JcclCollNet listen comm");
        }
        if (!l.handedToAggregator) {
            closeQuietly(l.server);
        }
    }
}

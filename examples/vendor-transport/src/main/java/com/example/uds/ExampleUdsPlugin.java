package com.example.uds;

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
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import io.jccl.spi.config.Env;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * ExampleUds: a small ncclNet transport between processes of one machine, over Unix domain
 * sockets. One device ({@code uds0}), host memory only, one stream socket per connection.
 *
 * <p>A listen comm binds a socket file in {@value #DIR_VARIABLE} (default: {@code java.io.tmpdir})
 * readable by this user only, and writes its path and a random 16-byte cookie into the handle. A
 * connector presents the cookie first; accept drops every connection that does not, so stray or
 * hostile connections never become comms and never delay genuine ones.
 */
public final class ExampleUdsPlugin implements NetPlugin {
    /** The name {@code NCCL_NET} selects. */
    public static final String NAME = "ExampleUds";
    /** Directory of the listeners' socket files (system property first, then environment, as JCCL reads NCCL's). */
    public static final String DIR_VARIABLE = "EXAMPLE_UDS_DIR";

    /** A connection that has not presented its cookie within this time is dropped. */
    private static final long HANDSHAKE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** Connections accepted from the kernel but not yet authenticated, per listener, at most. */
    private static final int MAX_UNAUTHENTICATED = 64;
    /** Room for the longest file name listen makes: "/exuds-" + pid + "-" + counter + "-" + 16 hex + ".sock". */
    private static final int FILE_NAME_ROOM = 60;
    private static final int SEND_BUFFER_BYTES = 4 << 20;
    private static final int HELLO_BYTES = 8 + UdsHandle.COOKIE_BYTES;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final AtomicLong listens = new AtomicLong();
    private final Set<Listener> listeners = ConcurrentHashMap.newKeySet();
    private volatile NetLogger logger = NetLogger.noop();
    private volatile Path dir;
    private volatile NetProperties properties;

    /** Does no work: discovery instantiates every provider and initialises only the one it picks. */
    public ExampleUdsPlugin() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public synchronized void init(NetLogger logger) throws NetException {
        this.logger = logger;
        if (dir != null) {
            return; // NCCL 2.28+ calls init per communicator: keep what the first call found
        }
        Path d = Path.of(Env.get(DIR_VARIABLE, System.getProperty("java.io.tmpdir"))).toAbsolutePath();
        if (!Files.isDirectory(d) || !Files.isWritable(d)) {
            throw NetException.systemError(NAME + ": " + d + " is not a writable directory; set " + DIR_VARIABLE);
        }
        if (d.toString().getBytes(StandardCharsets.UTF_8).length + FILE_NAME_ROOM > UdsHandle.MAX_PATH_BYTES) {
            throw NetException.systemError(NAME + ": socket directory " + d + " is too long for a handle (at most "
                    + (UdsHandle.MAX_PATH_BYTES - FILE_NAME_ROOM) + " bytes); set " + DIR_VARIABLE + "=/tmp");
        }
        try {
            SocketChannel.open(StandardProtocolFamily.UNIX).close(); // proves the OS and the JDK support them
        } catch (IOException | UnsupportedOperationException e) {
            throw NetException.systemError(NAME + ": no Unix domain sockets here: " + e, e);
        }
        properties = NetProperties.builder("uds0")
                .ptrSupport(PointerType.HOST.mask())
                .speedMbps(10_000)   // nominal: NCCL only weighs devices against each other
                .maxRecvs(1)         // no grouped receives: tags are not used
                .build();
        dir = d;
        logger.info(LogSubsystem.NET | LogSubsystem.INIT, "NET/%s: device uds0, socket files in %s", NAME, d);
    }

    @Override
    public int devices() throws NetException {
        initialised();
        return 1;
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        device(dev);
        return properties;
    }

    private void initialised() throws NetException {
        if (dir == null) {
            throw NetException.internalError(NAME + ": called before a successful init");
        }
    }

    private void device(int dev) throws NetException {
        initialised();
        if (dev != 0) {
            throw NetException.invalidArgument(NAME + ": device " + dev + " does not exist (devices: 0..0)");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Connection set-up

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        device(dev);
        byte[] cookie = new byte[UdsHandle.COOKIE_BYTES];
        RANDOM.nextBytes(cookie);
        // pid and counter keep names apart in this process, the random part from stale files of dead ones.
        Path path = dir.resolve("exuds-" + ProcessHandle.current().pid() + "-" + listens.incrementAndGet() + "-"
                + Long.toHexString(RANDOM.nextLong()) + ".sock");
        ServerSocketChannel server = null;
        try {
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(path), 512); // a deep backlog: connects never wait on accept
            server.configureBlocking(false);
            restrictToOwner(path);
            UdsHandle.write(handle, path, cookie);
        } catch (IOException | NetException e) {
            closeQuietly(server);
            deleteQuietly(path);
            throw e instanceof NetException ne ? ne
                    : NetException.systemError(NAME + ": cannot listen on " + path + ": " + e.getMessage(), e);
        }
        Listener l = new Listener(server, path, cookie);
        listeners.add(l);
        logger.info(LogSubsystem.NET, "NET/%s: listening on %s", NAME, path);
        return l;
    }

    /** Other users cannot even connect; the cookie tells this user's genuine peers from the rest. */
    private static void restrictToOwner(Path path) throws IOException {
        try {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // A file system without POSIX permissions: the cookie alone authenticates.
        }
    }

    /**
     * Connects and presents the cookie in one call: a Unix domain connect completes at once (the
     * kernel queues it on the listener without waiting for accept), and 24 bytes always fit into a
     * new socket's empty buffer. So connect never needs to be called again and never blocks.
     */
    @Override
    public SendComm connect(int dev, NetHandle handle) throws NetException {
        device(dev);
        UdsHandle.Contents to = UdsHandle.read(handle);
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.configureBlocking(false);
            // A Unix stream socket's bytes in flight count against the sender's buffer: a larger one
            // means fewer trips through test() per large message (the kernel caps it at wmem_max).
            ch.setOption(StandardSocketOptions.SO_SNDBUF, SEND_BUFFER_BYTES);
            if (!ch.connect(UnixDomainSocketAddress.of(to.path()))) {
                throw new IOException("connect did not complete at once");
            }
            ByteBuffer hello = ByteBuffer.allocate(HELLO_BYTES).order(ByteOrder.BIG_ENDIAN);
            hello.putLong(UdsHandle.MAGIC).put(to.cookie()).flip();
            ch.write(hello);
            if (hello.hasRemaining()) {
                throw new IOException("the handshake did not fit into a new socket's buffer");
            }
        } catch (IOException e) {
            closeQuietly(ch);
            throw NetException.systemError(NAME + ": cannot connect to " + to.path() + " (listener closed or gone?): "
                    + e.getMessage(), e);
        }
        logger.info(LogSubsystem.NET, "NET/%s: connected to %s", NAME, to.path());
        return new UdsConnection.Sender(ch);
    }

    @Override
    public RecvComm accept(ListenComm listenComm) throws NetException {
        if (!(listenComm instanceof Listener l) || !listeners.contains(l)) {
            throw NetException.invalidArgument(NAME + ": accept on a listen comm this transport did not open, or closed");
        }
        return l.accept();
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        if (!(comm instanceof Listener l) || !listeners.remove(l)) {
            throw NetException.invalidArgument(NAME + ": closeListen of a listen comm this transport did not open, "
                    + "or closed already");
        }
        l.close();
    }

    /** A bound socket file, its cookie, and the connections still to present it. */
    private final class Listener implements ListenComm {
        private final ServerSocketChannel server;
        private final Path path;
        private final byte[] cookie;
        private final List<Unauthenticated> waiting = new ArrayList<>();

        private record Unauthenticated(SocketChannel channel, ByteBuffer hello, long since) {
        }

        Listener(ServerSocketChannel server, Path path, byte[] cookie) {
            this.server = server;
            this.path = path;
            this.cookie = cookie;
        }

        synchronized RecvComm accept() throws NetException {
            long now = System.nanoTime();
            try {
                SocketChannel c;
                while ((c = server.accept()) != null) {
                    c.configureBlocking(false);
                    if (waiting.size() >= MAX_UNAUTHENTICATED) {
                        drop(waiting.remove(0), "too many connections without a handshake");
                    }
                    waiting.add(new Unauthenticated(c, ByteBuffer.allocate(HELLO_BYTES), now));
                }
            } catch (IOException e) {
                throw NetException.systemError(NAME + ": accept on " + path + " failed: " + e.getMessage(), e);
            }
            // Read each waiting connection without blocking: a silent one cannot hold up the others.
            for (Iterator<Unauthenticated> it = waiting.iterator(); it.hasNext(); ) {
                Unauthenticated u = it.next();
                String problem;
                try {
                    problem = u.channel().read(u.hello()) < 0 ? "closed before its handshake" : null;
                } catch (IOException e) {
                    problem = "failed before its handshake: " + e.getMessage();
                }
                if (problem == null && !u.hello().hasRemaining()) {
                    it.remove();
                    if (genuine(u.hello())) {
                        logger.info(LogSubsystem.NET, "NET/%s: accepted a connection on %s", NAME, path);
                        return new UdsConnection.Receiver(u.channel());
                    }
                    drop(u, "wrong handshake (not a peer of this listen comm)");
                } else if (problem == null && now - u.since() > HANDSHAKE_TIMEOUT_NANOS) {
                    it.remove();
                    drop(u, "no handshake within " + TimeUnit.NANOSECONDS.toSeconds(HANDSHAKE_TIMEOUT_NANOS) + " s");
                } else if (problem != null) {
                    it.remove();
                    drop(u, problem);
                }
            }
            return null;
        }

        private boolean genuine(ByteBuffer hello) {
            hello.flip();
            long magic = hello.getLong();
            byte[] presented = new byte[UdsHandle.COOKIE_BYTES];
            hello.get(presented);
            // Constant-time comparison: timing must not reveal how much of the cookie was right.
            return magic == UdsHandle.MAGIC && MessageDigest.isEqual(presented, cookie);
        }

        private void drop(Unauthenticated u, String why) {
            logger.info(LogSubsystem.NET, "NET/%s: dropped a connection on %s: %s", NAME, path, why);
            closeQuietly(u.channel());
        }

        /** Closes the listening socket and the unaccepted connections; accepted comms stay open. */
        synchronized void close() {
            closeQuietly(server);
            for (Unauthenticated u : waiting) {
                closeQuietly(u.channel());
            }
            waiting.clear();
            deleteQuietly(path);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Memory registration

    @Override
    public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
        UdsConnection c = connection(comm);
        if (type != PointerType.HOST) {
            throw NetException.invalidUsage(NAME + ": regMr of " + type + " memory; device uds0 supports HOST only");
        }
        return new Registration(c, data);
    }

    @Override
    public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
        UdsConnection c = connection(comm);
        if (!(mhandle instanceof Registration r) || r.owner != c || !r.live) {
            throw NetException.invalidArgument(NAME + ": deregMr of a handle this comm did not issue, or one already "
                    + "released (" + mhandle + ")");
        }
        r.live = false;
    }

    private static UdsConnection connection(NetComm comm) throws NetException {
        if (comm instanceof UdsConnection c) {
            return c;
        }
        throw NetException.invalidArgument(NAME + ": not a comm of this transport: " + comm);
    }

    // ---------------------------------------------------------------------------------------------
    // Data path: no allocation, no blocking (see UdsConnection)

    @Override
    public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        if (!(comm instanceof UdsConnection.Sender s)) {
            throw NetException.invalidArgument(NAME + ": isend on something other than an " + NAME + " send comm");
        }
        return s.post(data, mhandle);
    }

    @Override
    public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException {
        if (!(comm instanceof UdsConnection.Receiver r)) {
            throw NetException.invalidArgument(NAME + ": irecv on something other than an " + NAME + " receive comm");
        }
        if (n != 1) {
            throw NetException.internalError(NAME + ": irecv of " + n + " buffers; maxRecvs is 1");
        }
        return r.post(data[0], mhandles[0]);
    }

    /** Host memory only: there is never anything to flush. */
    @Override
    public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles) {
        return null;
    }

    @Override
    public boolean test(NetRequest request, int[] sizes) throws NetException {
        if (!(request instanceof UdsConnection.Request r)) {
            throw NetException.invalidArgument(NAME + ": test of a request this transport did not issue");
        }
        return r.owner.test(r, sizes);
    }

    // ---------------------------------------------------------------------------------------------
    // Closing

    @Override
    public void closeSend(SendComm comm) throws NetException {
        connection(comm).close();
    }

    @Override
    public void closeRecv(RecvComm comm) throws NetException {
        connection(comm).close();
    }

    /** Closes listeners left open, so that no socket file outlives the plugin. */
    @Override
    public void close() {
        for (Listener l : listeners) {
            if (listeners.remove(l)) {
                l.close();
            }
        }
    }

    private static void closeQuietly(java.nio.channels.Channel c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                // Closing only has to be attempted; the descriptor is released either way.
            }
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // A socket file left behind only takes a name; names are random, so it never collides.
        }
    }
}

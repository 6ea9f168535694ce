package io.jccl.net.socket;

import io.jccl.spi.ListenComm;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * A listening socket that turns incoming TCP connections into receive comms.
 *
 * <p>Every socket must present the listener's secret in its {@link Handshake} within {@code JCCL_SOCKET_CONNECT_TIMEOUT_MS};
 * sockets that send garbage, the wrong secret or nothing at all are closed and logged, and never
 * disturb the others. Sockets of one comm (the control stream, the data streams and the liveness
 * socket) are grouped by their connection id; a comm is ready once all have arrived. Any number of comms may be accepted.
 */
final class SocketListenComm implements ListenComm {
    /** Handshakes in progress at most; the oldest is dropped beyond this, so a flood cannot grow memory. */
    static final int MAX_HANDSHAKES = 1024;

    private final SocketNetPlugin plugin;
    private final SocketConfig.Settings settings;
    private final ServerSocketChannel server;
    private final byte[] secret;
    final InetSocketAddress address;
    private final ArrayDeque<Incoming> handshaking = new ArrayDeque<>();
    private final Map<Long, Assembly> assembling = new HashMap<>();
    private final ArrayDeque<SocketRecvComm> ready = new ArrayDeque<>();
    private boolean closed;

    /** A socket whose handshake has not fully arrived. */
    private static final class Incoming {
        final SocketChannel channel;
        final String remote;
        final ByteBuffer bytes = ByteBuffer.allocate(Handshake.BYTES);
        final long deadline;

        Incoming(SocketChannel channel, String remote, long deadline) {
            this.channel = channel;
            this.remote = remote;
            this.deadline = deadline;
        }
    }

    /** The sockets of one comm that have arrived so far. */
    private static final class Assembly {
        final SocketChannel[] sockets;
        final String remote;
        final long deadline;
        int arrived;

        Assembly(int streams, String remote, long deadline) {
            this.sockets = new SocketChannel[Handshake.sockets(streams)];
            this.remote = remote;
            this.deadline = deadline;
        }
    }

    SocketListenComm(SocketNetPlugin plugin, SocketConfig.Settings settings, ServerSocketChannel server, byte[] secret,
                     InetSocketAddress address) {
        this.plugin = plugin;
        this.settings = settings;
        this.server = server;
        this.secret = secret;
        this.address = address;
    }

    /** Non-blocking: accepts what has arrived and returns the next complete comm, or null. */
    synchronized SocketRecvComm accept() throws NetException {
        if (closed) {
            throw NetException.internalError("accept on a closed JcclSocket listen comm " + address);
        }
        long now = System.nanoTime();
        try {
            SocketChannel c;
            while ((c = server.accept()) != null) {
                c.configureBlocking(false);
                if (handshaking.size() == MAX_HANDSHAKES) {
                    drop(handshaking.poll(), "too many handshakes in progress");
                }
                handshaking.add(new Incoming(c, describe(c.getRemoteAddress()), now + settings.connectTimeout().toNanos()));
            }
        } catch (IOException e) {
            throw NetException.systemError("JcclSocket listener " + address + " failed: " + e.getMessage(), e);
        }
        for (Iterator<Incoming> it = handshaking.iterator(); it.hasNext(); ) {
            Incoming s = it.next();
            boolean admitted = false;
            String rejection;
            try {
                if (s.channel.read(s.bytes) < 0) {
                    rejection = "closed before its handshake";
                } else if (!s.bytes.hasRemaining()) {
                    Handshake h = Handshake.decode(s.bytes.flip(), secret);
                    it.remove();
                    admitted = true;
                    admit(s, h, now);
                    continue;
                } else if (now - s.deadline > 0) {
                    rejection = "sent no complete handshake within " + settings.connectTimeout().toMillis() + " ms";
                } else {
                    continue;
                }
            } catch (IOException | IllegalArgumentException e) {
                rejection = e.getMessage();
            }
            if (!admitted) {
                it.remove();
            }
            drop(s, rejection);
        }
        for (Iterator<Assembly> it = assembling.values().iterator(); it.hasNext(); ) {
            Assembly a = it.next();
            if (now - a.deadline > 0) {
                it.remove();
                plugin.logger().warn("NET/JcclSocket: listener %s dropped an incomplete connection from %s "
                        + "(%d of %d sockets arrived in time)", address, a.remote, a.arrived, a.sockets.length);
                for (SocketChannel c : a.sockets) {
                    closeQuietly(c);
                }
            }
        }
        return ready.poll();
    }

    private void admit(Incoming s, Handshake h, long now) throws IOException, NetException {
        Assembly a = assembling.computeIfAbsent(h.connectionId, id -> new Assembly(h.streams, s.remote,
                now + settings.connectTimeout().toNanos()));
        if (a.sockets.length != Handshake.sockets(h.streams) || a.sockets[h.socketIndex] != null) {
            drop(s, "inconsistent handshake for connection " + Long.toHexString(h.connectionId));
            return;
        }
        plugin.configure(s.channel);
        a.sockets[h.socketIndex] = s.channel;
        if (++a.arrived == a.sockets.length) {
            assembling.remove(h.connectionId);
            SocketChannel[] data = new SocketChannel[h.streams];
            System.arraycopy(a.sockets, 1, data, 0, h.streams);
            SocketRecvComm comm = new SocketRecvComm(plugin, settings, a.sockets[0], data,
                    a.sockets[Handshake.livenessIndex(h.streams)], settings.threads(), a.remote);
            comm.start();
            ready.add(comm);
            plugin.logger().info(LogSubsystem.NET, "NET/JcclSocket: accepted connection from %s on %s "
                    + "(%d data streams)", a.remote, address, h.streams);
        }
    }

    private void drop(Incoming s, String why) {
        plugin.logger().warn("NET/JcclSocket: listener %s dropped a connection from %s: %s", address, s.remote, why);
        closeQuietly(s.channel);
    }

    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // Closing a listening socket cannot lose data; nothing to report.
        }
        handshaking.forEach(s -> closeQuietly(s.channel));
        assembling.values().forEach(a -> {
            for (SocketChannel c : a.sockets) {
                closeQuietly(c);
            }
        });
        ready.forEach(SocketRecvComm::close);
        handshaking.clear();
        assembling.clear();
        ready.clear();
    }

    private static String describe(SocketAddress a) {
        return a instanceof InetSocketAddress i ? i.getAddress().getHostAddress() + ":" + i.getPort() : String.valueOf(a);
    }

    static void closeQuietly(SocketChannel c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                // Dropping a connection: nothing else to do if the close itself fails.
            }
        }
    }
}

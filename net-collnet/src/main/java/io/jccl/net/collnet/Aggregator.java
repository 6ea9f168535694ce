package io.jccl.net.collnet;

import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetLogger;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * JcclCollNet's aggregation service, the switch of in-network reduction: it accepts the ranks'
 * connections, forms each group once all its ranks (their data and heartbeat connections) have
 * joined, and then runs the group's reductions ({@link AggregatorGroup}). It runs as a thread of
 * one rank (one group) or as a process of its own ({@code jccl collnet-aggregator}, any number
 * of groups). Every connection starts with the aggregator's secret; anything else is dropped.
 */
public final class Aggregator implements AutoCloseable {
    /** A group whose ranks are still joining. */
    private static final class Forming {
        final int nranks;
        final SocketChannel[] data;
        final SocketChannel[] beats;
        final long deadline;

        Forming(int nranks, long deadline) {
            this.nranks = nranks;
            this.data = new SocketChannel[nranks];
            this.beats = new SocketChannel[nranks];
            this.deadline = deadline;
        }

        boolean complete() {
            for (int r = 0; r < nranks; r++) {
                if (data[r] == null || beats[r] == null) {
                    return false;
                }
            }
            return true;
        }

        List<Integer> joined() {
            List<Integer> out = new ArrayList<>();
            for (int r = 0; r < nranks; r++) {
                if (data[r] != null && beats[r] != null) {
                    out.add(r);
                }
            }
            return out;
        }
    }

    private final ServerSocketChannel server;
    private final byte[] secret;
    private final CollNetConfig.Settings settings;
    private final NetLogger log;
    private final boolean oneGroup;
    private final Map<String, Forming> forming = new HashMap<>();
    private final Set<AggregatorGroup> running = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private int groupsFormed;

    private Aggregator(ServerSocketChannel server, byte[] secret, CollNetConfig.Settings settings, NetLogger log,
                       boolean oneGroup) {
        this.server = server;
        this.secret = secret.clone();
        this.settings = settings;
        this.log = log;
        this.oneGroup = oneGroup;
    }

    /**
     * Starts serving on a bound server socket, which the aggregator then owns.
     *
     * @param oneGroup stop accepting once one group has formed or failed (a rank's aggregator)
     */
    static Aggregator start(ServerSocketChannel server, byte[] secret, CollNetConfig.Settings settings, NetLogger log,
                            boolean oneGroup) {
        Aggregator a = new Aggregator(server, secret, settings, log, oneGroup);
        Thread.ofPlatform().daemon().name("jccl-collnet-accept").start(a::acceptLoop);
        Thread.ofPlatform().daemon().name("jccl-collnet-forming").start(a::expireLoop);
        return a;
    }

    /**
     * An aggregator process's service: listens on {@code bind} and serves groups until closed.
     *
     * @return the running aggregator; {@link #address()} says where
     */
    public static Aggregator serve(InetSocketAddress bind, byte[] secret, NetLogger log) throws IOException {
        CollNetConfig.Settings s = CollNetConfig.fromEnvironment();
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(bind, 256);
        return start(server, secret, s, log, false);
    }

    /** @return where the aggregator listens */
    public InetSocketAddress address() throws IOException {
        return (InetSocketAddress) server.getLocalAddress();
    }

    /** @return groups running now */
    public int runningGroups() {
        return running.size();
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!closed) {
                    log.warn("JcclCollNet aggregator: accept failed: %s", e.getMessage());
                }
                return;
            }
            Thread.ofPlatform().daemon().name("jccl-collnet-hello").start(() -> hello(ch));
        }
    }

    /** Reads a connection's hello and adds it to its group; drops it with one log line if it is not a rank's. */
    private void hello(SocketChannel ch) {
        String from = "?";
        try {
            from = String.valueOf(ch.getRemoteAddress());
            ch.configureBlocking(false);
            ByteBuffer h = ByteBuffer.allocate(Wire.HELLO_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            Wire.readFully(ch, h, System.nanoTime() + settings.timeoutMs() * 1_000_000, "a rank's hello");
            h.flip();
            int magic = h.getInt();
            int version = h.get();
            int kind = h.get();
            h.getShort();
            byte[] key = new byte[16];
            byte[] group = new byte[16];
            h.get(key).get(group);
            int nranks = h.getInt();
            int rank = h.getInt();
            if (magic != Wire.MAGIC || version != Wire.VERSION) {
                throw new IOException("not a JcclCollNet rank (magic 0x" + Integer.toHexString(magic) + ", version "
                        + version + ")");
            }
            if (!MessageDigest.isEqual(key, secret)) {
                answer(ch, 1, "wrong key: set JCCL_COLLNET_SECRET to the aggregator's");
                throw new IOException("wrong key (JCCL_COLLNET_SECRET)");
            }
            if ((kind != Wire.KIND_DATA && kind != Wire.KIND_HEARTBEAT) || nranks < 1 || nranks > 65536 || rank < 0
                    || rank >= nranks) {
                answer(ch, 1, "malformed hello: kind " + kind + ", rank " + rank + " of " + nranks);
                close(ch);
                return;
            }
            ch.configureBlocking(true);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            join(HexFormat.of().formatHex(group), nranks, rank, kind, ch);
        } catch (IOException e) {
            log.warn("JcclCollNet aggregator: dropped a connection from %s: %s", from, e.getMessage());
            close(ch);
        }
    }

    private synchronized void join(String group, int nranks, int rank, int kind, SocketChannel ch) throws IOException {
        if (closed || (oneGroup && groupsFormed > 0)) {
            answer(ch, 1, "this aggregator serves one group, which has formed already");
            close(ch);
            return;
        }
        Forming f = forming.computeIfAbsent(group, g -> new Forming(nranks,
                System.nanoTime() + settings.timeoutMs() * 1_000_000));
        if (f.nranks != nranks) {
            answer(ch, 1, "rank " + rank + " joins group " + group + " as one of " + nranks + " ranks; others said "
                    + f.nranks);
            close(ch);
            return;
        }
        SocketChannel[] slots = kind == Wire.KIND_DATA ? f.data : f.beats;
        if (slots[rank] != null) {
            answer(ch, 1, "rank " + rank + " joined group " + group + " twice");
            close(ch);
            return;
        }
        slots[rank] = ch;
        if (!f.complete()) {
            return;
        }
        forming.remove(group);
        groupsFormed++;
        String name = group.substring(0, 8);
        AggregatorGroup[] made = new AggregatorGroup[1];
        made[0] = new AggregatorGroup(name, f.data, f.beats, settings.chunkBytes(), settings.window(),
                settings.timeoutMs(), log, () -> running.remove(made[0]));
        running.add(made[0]);
        for (int r = 0; r < nranks; r++) {
            answer(f.data[r], 0, "");
            answer(f.beats[r], 0, "");
        }
        made[0].start();
        log.info(LogSubsystem.NET, "JcclCollNet aggregator: group %s of %d ranks formed (chunks of %d bytes, %d in "
                + "flight)", name, nranks, settings.chunkBytes(), settings.window());
        if (oneGroup) {
            closeServer();
        }
    }

    /** Fails groups whose ranks did not all join within the timeout. */
    private void expireLoop() {
        while (!closed) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (this) {
                long now = System.nanoTime();
                forming.entrySet().removeIf(e -> {
                    Forming f = e.getValue();
                    if (now - f.deadline < 0) {
                        return false;
                    }
                    String why = "only ranks " + f.joined() + " of " + f.nranks + " joined group "
                            + e.getKey().substring(0, 8) + " within " + settings.timeoutMs() + " ms";
                    log.warn("JcclCollNet aggregator: %s", why);
                    abandon(f, why);
                    return true;
                });
                if (oneGroup && closedServer && forming.isEmpty()) {
                    return;
                }
            }
        }
    }

    private void abandon(Forming f, String why) {
        for (SocketChannel[] side : List.of(f.data, f.beats)) {
            for (SocketChannel c : side) {
                if (c != null) {
                    answer(c, 1, why);
                    close(c);
                }
            }
        }
    }

    private boolean closedServer;

    private void closeServer() {
        closedServer = true;
        try {
            server.close();
        } catch (IOException e) {
            // Nothing more is accepted either way.
        }
    }

    private void answer(SocketChannel ch, int status, String text) {
        try {
            boolean blocking = ch.isBlocking();
            if (blocking) {
                ch.configureBlocking(false);
            }
            Wire.writeFully(ch, Wire.answer(status, settings.chunkBytes(), settings.window(), text),
                    System.nanoTime() + 1_000_000_000L, "an answer");
            if (blocking) {
                ch.configureBlocking(true);
            }
        } catch (IOException e) {
            log.info(LogSubsystem.NET, "JcclCollNet aggregator: cannot answer a rank: %s", e.getMessage());
        }
    }

    private static void close(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // Dropping the connection is all that is left to do.
        }
    }

    /** Stops accepting and fails every group, running or forming, with the reason. */
    public void close(String reason) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            closeServer();
            for (Forming f : forming.values()) {
                abandon(f, reason);
            }
            forming.clear();
        }
        for (AggregatorGroup g : running) {
            g.shutDown(reason);
        }
    }

    @Override
    public void close() {
        close("the aggregator was closed");
    }
}

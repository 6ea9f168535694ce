package io.jccl.core.bootstrap;

import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The bootstrap root of one communicator, as NCCL's {@code bootstrapRoot}: waits until every rank
 * has announced its listening address, tells each rank its ring successor's address, and exits.
 * If not every rank arrives within the timeout, it tells those that did which ranks are missing.
 */
public final class BootstrapRoot {
    private final NetLogger log;
    private final long deadline;
    private final TreeMap<Integer, Joined> joined = new TreeMap<>();
    private int nranks = -1;
    private volatile boolean finished;
    private BootstrapServer server;

    private record Joined(BootstrapServer.Inbound connection, InetSocketAddress listener) {
    }

    private BootstrapRoot(NetLogger log, Duration timeout) {
        this.log = log;
        this.deadline = System.nanoTime() + timeout.toNanos();
    }

    /**
     * Starts a root in this JVM; it serves one communicator's init on its own daemon thread.
     *
     * @param bind    where to listen (port 0 for any)
     * @param secret  the communicator's secret
     * @param timeout how long to wait for every rank
     * @return the address ranks connect to
     * @throws IOException if it cannot listen there
     */
    public static InetSocketAddress start(InetSocketAddress bind, byte[] secret, Duration timeout, NetLogger log)
            throws IOException {
        BootstrapRoot root = new BootstrapRoot(log, timeout);
        root.server = new BootstrapServer(bind, secret, root.new Handler(), "jccl-bootstrap-root",
                TimeUnit.MILLISECONDS.toNanos(200));
        InetSocketAddress a = root.server.address();
        log.info(LogSubsystem.BOOTSTRAP, "Bootstrap: root listening on %s", a);
        return a;
    }

    private final class Handler implements BootstrapServer.Handler {
        @Override
        public void onFrame(BootstrapServer.Inbound from, int src, int tag, byte[] payload) {
            if (finished || tag != Wire.HELLO || from.identity().role() != SecretHandshake.ROLE_ROOT_CLIENT) {
                return;
            }
            int rank = from.identity().rank();
            try {
                ByteBuffer b = ByteBuffer.wrap(payload);
                int n = b.getInt();
                InetSocketAddress listener = Wire.address(b);
                if (n < 1 || rank < 0 || rank >= n) {
                    reject(from, "rank " + rank + " of " + n + " is not a valid rank");
                } else if (nranks != -1 && n != nranks) {
                    reject(from, "rank " + rank + " says the communicator has " + n + " ranks, but rank "
                            + joined.firstKey() + " said " + nranks);
                } else if (joined.containsKey(rank)) {
                    reject(from, "rank " + rank + " joined twice (from " + joined.get(rank).connection().remote
                            + " and " + from.remote + ")");
                } else {
                    nranks = n;
                    joined.put(rank, new Joined(from, listener));
                    if (joined.size() == nranks) {
                        complete();
                    }
                }
            } catch (IOException | RuntimeException e) {
                reject(from, "malformed hello: " + e);
            }
        }

        @Override
        public void onClosed(BootstrapServer.Inbound from, String cause) {
            if (!finished) {
                joined.values().removeIf(j -> j.connection() == from);
            }
        }

        @Override
        public void onTick(long now) {
            if (!finished && now - deadline > 0) {
                List<Integer> missing = new ArrayList<>();
                for (int r = 0; r < Math.max(nranks, 1); r++) {
                    if (!joined.containsKey(r)) {
                        missing.add(r);
                    }
                }
                String why = "bootstrap root: only " + joined.size() + " of " + (nranks < 0 ? "?" : nranks)
                        + " ranks joined in time; missing ranks " + missing;
                log.warn("%s", why);
                for (Joined j : joined.values()) {
                    reject(j.connection(), NetResult.TIMEOUT, why);
                }
                finish();
            }
        }

        @Override
        public void onDropped(String remote, String why) {
            log.warn("Bootstrap: root dropped a connection from %s: %s", remote, why);
        }
    }

    private void complete() {
        for (var e : joined.entrySet()) {
            int next = (e.getKey() + 1) % nranks;
            try {
                e.getValue().connection().send(-1, Wire.NEXT, Wire.address(joined.get(next).listener()));
            } catch (IOException ex) {
                log.warn("Bootstrap: root could not answer rank %d: %s", e.getKey(), ex.getMessage());
            }
        }
        log.info(LogSubsystem.BOOTSTRAP, "Bootstrap: root saw all %d ranks", nranks);
        finish();
    }

    private void reject(BootstrapServer.Inbound to, String why) {
        reject(to, NetResult.INVALID_USAGE, why);
    }

    private void reject(BootstrapServer.Inbound to, NetResult result, String why) {
        try {
            byte[] text = why.getBytes(StandardCharsets.UTF_8);
            to.send(-1, Wire.ROOT_ERROR, ByteBuffer.allocate(4 + text.length).putInt(result.code()).put(text).array());
        } catch (IOException ignored) {
            // The rank is gone already; its own init reports that.
        }
        BootstrapServer.closeQuietly(to.channel);
    }

    private void finish() {
        finished = true;
        server.close();
    }
}

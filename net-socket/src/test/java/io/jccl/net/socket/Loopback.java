package io.jccl.net.socket;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Test helper: a JcclSocket instance configured by the given variables (as system properties while
 * it initialises), connected pairs over its first device, and polling with a deadline so that a
 * broken transport fails a test instead of hanging it.
 */
final class Loopback implements AutoCloseable {
    static final long DEADLINE_MS = 20_000;

    final SocketNetPlugin plugin = new SocketNetPlugin();
    final Arena arena = Arena.ofShared();
    /** Every pair made here, closed with the loopback: a comm left open keeps its I/O threads. */
    private final List<Pair> pairs = new ArrayList<>();

    Loopback(Map<String, String> variables) throws NetException {
        this(variables, NetLogger.noop());
    }

    Loopback(Map<String, String> variables, NetLogger logger) throws NetException {
        variables.forEach(System::setProperty);
        try {
            plugin.init(logger);
        } finally {
            variables.keySet().forEach(System::clearProperty);
        }
    }

    Loopback() throws NetException {
        this(Map.of());
    }

    /** A connected pair and the listen comm it came from. */
    record Pair(ListenComm listen, SendComm send, RecvComm recv) {
    }

    /** A connected pair with a registered source and destination of {@code bytes} each. */
    static final class Wired {
        final Pair pair;
        final MemorySegment src;
        final MemorySegment dst;
        final MemoryHandle sm;
        final MemoryHandle rm;

        Wired(Loopback lo, long bytes) throws NetException {
            pair = lo.pair();
            src = lo.allocate(bytes);
            dst = lo.allocate(bytes);
            sm = lo.register(pair.send(), src);
            rm = lo.register(pair.recv(), dst);
        }
    }

    Pair pair() throws NetException {
        NetHandle handle = NetHandle.allocate();
        ListenComm listen = plugin.listen(0, handle);
        SendComm send = null;
        RecvComm recv = null;
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        while (send == null || recv == null) {
            if (send == null) {
                send = plugin.connect(0, handle);
            }
            if (recv == null) {
                recv = plugin.accept(listen);
            }
            if (System.currentTimeMillis() > deadline) {
                fail("connect/accept did not complete within " + DEADLINE_MS + " ms");
            }
        }
        Pair pair = new Pair(listen, send, recv);
        pairs.add(pair);
        return pair;
    }

    MemorySegment allocate(long bytes) {
        return arena.allocate(Math.max(bytes, 1), 64);
    }

    MemoryHandle register(NetComm comm, MemorySegment memory) throws NetException {
        return plugin.regMr(comm, memory, PointerType.HOST);
    }

    /** How a request ended: its sizes, or its failure. */
    record Outcome(int[] sizes, NetException error) {
        int[] sizesOrThrow() throws NetException {
            if (error != null) {
                throw error;
            }
            return sizes;
        }
    }

    /**
     * Polls every request, round-robin, until each is done or failed, as the two ends of a
     * connection in two processes would progress; fails the test if the deadline passes.
     */
    Outcome[] settle(NetRequest... requests) {
        Outcome[] outcomes = new Outcome[requests.length];
        int open = requests.length;
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        while (open > 0) {
            for (int i = 0; i < requests.length; i++) {
                if (outcomes[i] != null) {
                    continue;
                }
                int[] sizes = new int[8];
                try {
                    if (plugin.test(requests[i], sizes)) {
                        outcomes[i] = new Outcome(sizes, null);
                        open--;
                    }
                } catch (NetException e) {
                    outcomes[i] = new Outcome(null, e);
                    open--;
                }
            }
            if (System.currentTimeMillis() > deadline) {
                fail(open + " request(s) did not complete within " + DEADLINE_MS + " ms");
            }
        }
        return outcomes;
    }

    /** Settles the requests and returns each one's sizes; throws the first failure. */
    int[][] awaitAll(NetRequest... requests) throws NetException {
        Outcome[] o = settle(requests);
        int[][] sizes = new int[o.length][];
        for (int i = 0; i < o.length; i++) {
            sizes[i] = o[i].sizesOrThrow();
        }
        return sizes;
    }

    /** Calls isend until it returns a request (it returns null while no receive is posted). */
    NetRequest send(SendComm comm, MemorySegment data, int tag, MemoryHandle mh) throws NetException {
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        NetRequest r;
        while ((r = plugin.isend(comm, data, tag, mh)) == null) {
            if (System.currentTimeMillis() > deadline) {
                fail("isend returned null for " + DEADLINE_MS + " ms");
            }
        }
        return r;
    }

    NetRequest recv(RecvComm comm, MemorySegment data, int tag, MemoryHandle mh) throws NetException {
        NetRequest r = plugin.irecv(comm, 1, new MemorySegment[] {data}, new int[] {tag}, new MemoryHandle[] {mh});
        if (r == null) {
            fail("irecv returned null with free request slots");
        }
        return r;
    }

    static void fillPattern(MemorySegment m, long seed) {
        for (long i = 0; i < m.byteSize(); i++) {
            m.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (seed * 31 + i * 7 + (i >>> 11)));
        }
    }

    static long checksum(MemorySegment m, long bytes) {
        long h = 1125899906842597L;
        for (long i = 0; i < bytes; i++) {
            h = 31 * h + m.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i);
        }
        return h;
    }

    @Override
    public void close() {
        // Comms a test left open stop here, or their threads would outlive it and be taken for
        // another test's (whose peer address, a reused port, they may share) or add to its load.
        for (Pair p : pairs) {
            try {
                plugin.closeSend(p.send());
                plugin.closeRecv(p.recv());
                plugin.closeListen(p.listen());
            } catch (NetException e) {
                throw new IllegalStateException("closing a loopback pair: " + e.getMessage(), e);
            }
        }
        plugin.close();
        arena.close();
    }
}

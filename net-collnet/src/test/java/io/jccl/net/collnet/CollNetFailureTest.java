package io.jccl.net.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the kit cannot show in one JVM: a rank or the aggregator that is killed or frozen (SIGSTOP)
 * fails every pending request of the others within JCCL_COLLNET_TIMEOUT_MS, with the reason; an
 * aggregator process serves groups and refuses a rank without its key.
 */
class CollNetFailureTest {
    private static final long TIMEOUT_MS = 1000;
    private Process peer;

    @BeforeEach
    void shortBound() {
        System.setProperty(CollNetConfig.JCCL_COLLNET_TIMEOUT_MS, Long.toString(TIMEOUT_MS));
    }

    @AfterEach
    void cleanUp() {
        System.clearProperty(CollNetConfig.JCCL_COLLNET_TIMEOUT_MS);
        System.clearProperty(CollNetConfig.JCCL_COLLNET_AGGREGATOR);
        System.clearProperty(CollNetConfig.JCCL_COLLNET_SECRET);
        if (peer != null) {
            peer.destroyForcibly();
        }
    }

    /** This JVM is rank {@code 1 - peerRank}; the peer process is {@code peerRank}. */
    private record Pair(JcclCollNetPlugin net, CollComm comm, BufferedReader peerOut) {
    }

    private Pair startPair(int peerRank) throws Exception {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-D" + CollNetConfig.JCCL_COLLNET_TIMEOUT_MS + "=" + TIMEOUT_MS, "-cp",
                System.getProperty("java.class.path"), CollNetPeer.class.getName(), Integer.toString(peerRank));
        peer = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream()));
        NetHandle theirs = NetHandle.fromBytes(HexFormat.of().parseHex(out.readLine().trim()));
        JcclCollNetPlugin net = new JcclCollNetPlugin();
        net.init(NetLogger.noop());
        NetHandle mine = NetHandle.allocate();
        ListenComm listen = net.listen(0, mine);
        PrintStream toPeer = new PrintStream(peer.getOutputStream(), true);
        toPeer.println(HexFormat.of().formatHex(mine.toByteArray()));
        int myRank = 1 - peerRank;
        NetHandle[] handles = myRank == 0 ? new NetHandle[] {mine, theirs} : new NetHandle[] {theirs, mine};
        CollComm comm = net.connect(handles, myRank, listen);
        net.closeListen(listen);
        return new Pair(net, comm, out);
    }

    /** Runs this rank's loop until it fails, signals the peer once both run, and returns ms from signal to failure. */
    private long failureAfter(Pair p, String signal, String expected) throws Exception {
        CompletableFuture<Void> ready = new CompletableFuture<>();
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try {
            Future<NetException> loop = ex.submit(() -> {
                try {
                    CollNetPeer.loop(p.net(), p.comm(), () -> ready.complete(null));
                    return null;
                } catch (NetException e) {
                    return e;
                }
            });
            ready.get(30, TimeUnit.SECONDS);
            assertEquals("READY", p.peerOut().readLine());
            Thread.sleep(200);
            long t0 = System.nanoTime();
            if (signal.equals("KILL")) {
                peer.destroyForcibly();
            } else {
                assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(peer.pid())).start().waitFor());
            }
            NetException e = loop.get(TIMEOUT_MS * 10, TimeUnit.MILLISECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("after SIG%s of the peer, this rank's request failed in %d ms: %s%n", signal, ms,
                    e.getMessage());
            assertEquals(NetResult.REMOTE_ERROR, e.result(), e.toString());
            assertTrue(e.getMessage().contains(expected), "the reason should say '" + expected + "': " + e.getMessage());
            return ms;
        } finally {
            ex.shutdownNow();
            p.net().closeColl(p.comm());
        }
    }

    @Test
    void aKilledRankFailsTheOtherAtOnce() throws Exception {
        long ms = failureAfter(startPair(1), "KILL", "rank 1");
        assertTrue(ms < TIMEOUT_MS, "a killed rank's connections close: its group fails without waiting for the "
                + "heartbeat bound, took " + ms + " ms");
    }

    @Test
    void aFrozenRankFailsTheOtherWithinTheBound() throws Exception {
        long ms = failureAfter(startPair(1), "STOP", "no heartbeat");
        assertTrue(ms >= TIMEOUT_MS / 2 && ms < 3 * TIMEOUT_MS, "a frozen rank is declared dead after about "
                + "JCCL_COLLNET_TIMEOUT_MS (" + TIMEOUT_MS + "), took " + ms + " ms");
    }

    @Test
    void aFrozenAggregatorFailsTheRanksWithinTheBound() throws Exception {
        // The peer is rank 0, so the aggregator is one of its threads, frozen with it.
        long ms = failureAfter(startPair(0), "STOP", "no heartbeat from the aggregator");
        assertTrue(ms >= TIMEOUT_MS / 2 && ms < 3 * TIMEOUT_MS, "took " + ms + " ms");
    }

    /** The aggregator is a process of its own, killed while two ranks (threads here) all-reduce through it. */
    @Test
    void aKilledAggregatorProcessFailsEveryRankAtOnce() throws Exception {
        String key = "0123456789abcdef0123456789abcdef";
        peer = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), AggregatorProcess.class.getName(), key))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        int port = Integer.parseInt(new BufferedReader(new InputStreamReader(peer.getInputStream())).readLine().trim());
        System.setProperty(CollNetConfig.JCCL_COLLNET_AGGREGATOR, "127.0.0.1:" + port);
        System.setProperty(CollNetConfig.JCCL_COLLNET_SECRET, key);
        JcclCollNetPlugin net = new JcclCollNetPlugin();
        net.init(NetLogger.noop());
        NetHandle[] handles = {NetHandle.allocate(), NetHandle.allocate()};
        ListenComm[] listens = {net.listen(0, handles[0]), net.listen(0, handles[1])};
        ExecutorService ex = Executors.newFixedThreadPool(2);
        try {
            CompletableFuture<Void> running = new CompletableFuture<>();
            java.util.concurrent.CountDownLatch both = new java.util.concurrent.CountDownLatch(2);
            List<Future<NetException>> loops = new java.util.ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                loops.add(ex.submit(() -> {
                    CollComm c = net.connect(handles, rank, listens[rank]);
                    try {
                        CollNetPeer.loop(net, c, () -> {
                            both.countDown();
                            running.complete(null);
                        });
                        return null;
                    } catch (NetException e) {
                        return e;
                    } finally {
                        net.closeColl(c);
                    }
                }));
            }
            running.get(30, TimeUnit.SECONDS);
            assertTrue(both.await(30, TimeUnit.SECONDS));
            Thread.sleep(200);
            long t0 = System.nanoTime();
            peer.destroyForcibly();
            for (Future<NetException> loop : loops) {
                NetException e = loop.get(TIMEOUT_MS * 10, TimeUnit.MILLISECONDS);
                long ms = (System.nanoTime() - t0) / 1_000_000;
                System.out.printf("after SIGKILL of the aggregator process, a rank's request failed in %d ms: %s%n", ms,
                        e.getMessage());
                assertEquals(NetResult.REMOTE_ERROR, e.result(), e.toString());
                assertTrue(e.getMessage().contains("aggregator"), e.getMessage());
                assertTrue(ms < TIMEOUT_MS, "a killed aggregator's connections close: every rank fails at once, took "
                        + ms + " ms");
            }
        } finally {
            ex.shutdownNow();
        }
    }

    @Test
    void anAggregatorProcessServesAGroupAndRefusesAWrongKey() throws Exception {
        byte[] key = HexFormat.of().parseHex("00112233445566778899aabbccddeeff");
        try (Aggregator a = Aggregator.serve(new InetSocketAddress("127.0.0.1", 0), key, NetLogger.noop())) {
            System.setProperty(CollNetConfig.JCCL_COLLNET_AGGREGATOR, "127.0.0.1:" + a.address().getPort());
            System.setProperty(CollNetConfig.JCCL_COLLNET_SECRET, HexFormat.of().formatHex(key));
            int n = 3;
            JcclCollNetPlugin net = new JcclCollNetPlugin();
            net.init(NetLogger.noop());
            assertEquals(1, net.devices());
            NetHandle[] handles = new NetHandle[n];
            ListenComm[] listens = new ListenComm[n];
            for (int r = 0; r < n; r++) {
                handles[r] = NetHandle.allocate();
                listens[r] = net.listen(0, handles[r]);
            }
            ExecutorService ex = Executors.newFixedThreadPool(n);
            try {
                List<Future<Float>> results = new java.util.ArrayList<>();
                for (int r = 0; r < n; r++) {
                    int rank = r;
                    results.add(ex.submit(() -> {
                        CollComm c = net.connect(handles, rank, listens[rank]);
                        MemorySegment buf = Arena.ofAuto().allocate(3 << 20, 64);
                        long count = buf.byteSize() / 4;
                        for (long i = 0; i < count; i++) {
                            buf.setAtIndex(ValueLayout.JAVA_FLOAT, i, rank + 1);
                        }
                        MemoryHandle mh = net.regMr(c, buf, PointerType.HOST);
                        NetRequest q = net.iallreduce(c, buf, buf, count, DataType.FLOAT32, ReduceOp.SUM, mh, mh);
                        int[] size = new int[1];
                        while (!net.test(q, size)) {
                            Thread.onSpinWait();
                        }
                        assertEquals(buf.byteSize(), size[0]);
                        float last = buf.getAtIndex(ValueLayout.JAVA_FLOAT, count - 1);
                        net.deregMr(c, mh);
                        net.closeColl(c);
                        return last;
                    }));
                }
                for (Future<Float> f : results) {
                    assertEquals(6.0f, f.get(30, TimeUnit.SECONDS));
                }
            } finally {
                ex.shutdownNow();
            }

            System.setProperty(CollNetConfig.JCCL_COLLNET_SECRET, "ffffffffffffffffffffffffffffffff");
            JcclCollNetPlugin stranger = new JcclCollNetPlugin();
            stranger.init(NetLogger.noop());
            NetHandle h = NetHandle.allocate();
            ListenComm l = stranger.listen(0, h);
            NetException e = assertThrows(NetException.class, () -> stranger.connect(new NetHandle[] {h}, 0, l));
            assertTrue(e.getMessage().contains("JCCL_COLLNET_SECRET"), e.getMessage());
        }
    }
}

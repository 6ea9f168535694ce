package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.jccl.net.ib.IbTestSupport.await;
import static io.jccl.net.ib.IbTestSupport.pattern;
import static io.jccl.net.ib.IbTestSupport.reg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Faults on a real verbs device: garbage on the side channel, forged and foreign handles, close
 * with requests in flight, a peer whose queue pair dies, a fatal async event, and a peer process
 * that is killed. In every case each pending request completes, with an error, within a bound.
 */
@RequiresRdma
class IbFaultTest {
    /** A dead peer is noticed within {@code JCCL_IB_PEER_TIMEOUT_MS}; this test uses a short one. */
    private static final int PEER_TIMEOUT_MS = 1500;
    /** The bound the tests hold the transport to: the peer timeout plus TCG's slowness. */
    private static final long BOUND_MS = PEER_TIMEOUT_MS + 8000;

    private static IbNetPlugin plugin;
    private static Arena arena;

    @BeforeAll
    static void setUp() throws NetException {
        if (!IbNetPlugin.isAvailable()) {
            return;
        }
        plugin = IbTestSupport.plugin(IbConfig.JCCL_IB_PEER_TIMEOUT_MS, Integer.toString(PEER_TIMEOUT_MS));
        arena = Arena.ofShared();
    }

    @AfterAll
    static void tearDown() {
        if (plugin != null) {
            plugin.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    /** Tests {@code r} until it completes; it must fail with {@code expected} within the bound. */
    private static NetException awaitFailure(NetPlugin p, NetRequest r, NetResult expected) {
        long start = System.nanoTime();
        NetException e = assertThrows(NetException.class, () -> {
            while (!p.test(r, null)) {
                if (System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(BOUND_MS)) {
                    fail("the request neither completed nor failed within " + BOUND_MS + " ms");
                }
                Thread.onSpinWait();
            }
        });
        assertEquals(expected, e.result(), e.getMessage());
        return e;
    }

    @Test
    void garbageAndStrayConnectionsAreDroppedWhileGenuineOnesConnect() throws Exception {
        NetHandle handle = NetHandle.allocate();
        ListenComm listen = plugin.listen(0, handle);
        InetSocketAddress at = IbHandle.read(handle).address();
        try (Socket junk = new Socket(at.getAddress(), at.getPort());
             Socket silent = new Socket(at.getAddress(), at.getPort());
             Socket forged = new Socket(at.getAddress(), at.getPort())) {
            OutputStream out = junk.getOutputStream();
            out.write("GET / HTTP/1.0\r\n\r\n".repeat(8).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            byte[] wrongSecret = new byte[16];
            new SecureRandom().nextBytes(wrongSecret);
            byte[] gid = new byte[16];
            forged.getOutputStream().write(new ConnectionInfo(ConnectionInfo.HELLO, wrongSecret, false,
                    new PeerAddress(Ibv.LINK_LAYER_ETHERNET, 5, 0, gid), 0, 0, new int[] {1}).encode().array());
            for (Socket s : List.of(junk, silent, forged)) {
                s.setSoTimeout(50);
            }
            // the listener drops all three (the silent one after the peer timeout) while accept is driven
            List<Socket> open = new ArrayList<>(List.of(junk, silent, forged));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BOUND_MS);
            while (!open.isEmpty()) {
                assertEquals(null, plugin.accept(listen), "garbage never becomes a comm");
                open.removeIf(IbFaultTest::closedByPeer);
                assertTrue(System.nanoTime() < deadline, "not dropped: " + open);
            }
            // a genuine peer still connects on the same listener
            SendComm send = null;
            RecvComm recv = null;
            while (send == null || recv == null) {
                if (send == null) {
                    send = plugin.connect(0, handle);
                }
                if (recv == null) {
                    recv = plugin.accept(listen);
                }
            }
            IbTestSupport.Pair p = new IbTestSupport.Pair(plugin, plugin, send, recv, listen, handle);
            MemorySegment src = pattern(arena, 1000, 5);
            MemorySegment dst = arena.allocate(1000, 64);
            NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0},
                    new MemoryHandle[] {reg(plugin, recv, dst)});
            await(plugin, IbTestSupport.send(p, src, 0, reg(plugin, send, src)));
            assertEquals(1000, await(plugin, r)[0]);
            assertEquals(-1, src.mismatch(dst));
            p.close();
        }
    }

    private static boolean closedByPeer(Socket s) {
        try {
            byte[] b = new byte[4096];
            while (true) {
                int n = s.getInputStream().read(b);
                if (n < 0) {
                    return true;
                }
            }
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.io.IOException e) {
            return true; // reset
        }
    }

    @Test
    void foreignForgedAndDeadHandlesFailClearly() throws Exception {
        NetException foreign = assertThrows(NetException.class,
                () -> plugin.connect(0, NetHandle.fromBytes("a socket transport's handle".getBytes())));
        assertEquals(NetResult.INVALID_ARGUMENT, foreign.result());

        NetHandle handle = NetHandle.allocate();
        ListenComm listen = plugin.listen(0, handle);
        NetHandle forged = handle.copy();
        forged.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, 30, (byte) ~handle.segment()
                .get(java.lang.foreign.ValueLayout.JAVA_BYTE, 30)); // one byte of the secret
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BOUND_MS);
        NetException e = assertThrows(NetException.class, () -> {
            while (plugin.connect(0, forged) == null) {
                assertEquals(null, plugin.accept(listen));
                assertTrue(System.nanoTime() < deadline, "the forged connect neither failed nor succeeded");
            }
        });
        assertEquals(NetResult.REMOTE_ERROR, e.result(), e.getMessage());
        assertEquals(0, IbHandle.resumeId(forged), "a failed connect leaves no resume state");
        plugin.closeListen(listen);

        NetException dead = assertThrows(NetException.class, () -> {
            while (plugin.connect(0, handle) == null) {
                Thread.onSpinWait();
            }
        });
        assertTrue(dead.result() == NetResult.SYSTEM_ERROR || dead.result() == NetResult.REMOTE_ERROR,
                dead.toString());
    }

    @Test
    void closingTheReceiverWithRequestsInFlightFailsTheSendersPendingRequests() throws Exception {
        IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin);
        MemorySegment src = pattern(arena, 4096, 1);
        MemorySegment dst = arena.allocate(4096, 64);
        MemoryHandle smh = reg(plugin, p.send(), src);
        MemoryHandle rmh = reg(plugin, p.recv(), dst);
        NetRequest r0 = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh});
        IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh});
        IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh});
        await(plugin, IbTestSupport.send(p, src, 0, smh));
        await(plugin, r0);
        NetRequest s1 = IbTestSupport.send(p, src, 0, smh);
        plugin.deregMr(p.recv(), rmh);
        plugin.closeRecv(p.recv()); // two receives still posted
        plugin.closeListen(p.listen());
        // s1 either reached the receiver before it closed, or fails: never hangs
        try {
            await(plugin, s1);
        } catch (NetException e) {
            assertEquals(NetResult.REMOTE_ERROR, e.result(), e.getMessage());
        }
        long start = System.nanoTime();
        NetException e = assertThrows(NetException.class, () -> {
            while (true) {
                NetRequest s = plugin.isend(p.send(), src, 0, smh);
                if (s != null) {
                    await(plugin, s);
                }
                assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(BOUND_MS), "no failure");
            }
        });
        assertEquals(NetResult.REMOTE_ERROR, e.result(), e.getMessage());
        plugin.closeSend(p.send());
    }

    @Test
    void closingTheSenderWithSendsInFlightFailsTheReceiversPendingRequests() throws Exception {
        IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin);
        long size = 32L << 20;
        MemorySegment src = arena.allocate(size, 4096);
        MemorySegment dst = arena.allocate(size, 4096);
        MemoryHandle smh = reg(plugin, p.send(), src);
        MemoryHandle rmh = reg(plugin, p.recv(), dst);
        NetRequest r1 = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh});
        NetRequest r2 = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh});
        NetRequest s1 = IbTestSupport.send(p, src, 0, smh);
        plugin.closeSend(p.send()); // a 32 MiB write in flight
        assertThrows(NetException.class, () -> plugin.test(s1, null), "a closed comm's request fails");
        long start = System.nanoTime();
        try {
            await(plugin, r1); // it may have arrived whole before the close
        } catch (NetException e) {
            assertEquals(NetResult.REMOTE_ERROR, e.result(), e.getMessage());
        }
        awaitFailure(plugin, r2, NetResult.REMOTE_ERROR);
        assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(BOUND_MS));
        assertEquals(NetResult.REMOTE_ERROR, assertThrows(NetException.class, () -> plugin.irecv(p.recv(), 1,
                new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh})).result());
        plugin.closeRecv(p.recv());
        plugin.closeListen(p.listen());
    }

    @Test
    void aPeerWhoseQueuePairDiedFailsPendingSendsWithinTheBound() throws Exception {
        // NCCL_IB_TIMEOUT stays at 20: the queue pair alone would retry for half a minute
        IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin);
        MemorySegment src = pattern(arena, 1 << 20, 2);
        MemorySegment dst = arena.allocate(1 << 20, 4096);
        MemoryHandle smh = reg(plugin, p.send(), src);
        NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0},
                new MemoryHandle[] {reg(plugin, p.recv(), dst)});
        Thread.sleep(500); // the clear-to-send lands
        ((IbComm) p.recv()).qps[0].toError(); // behind the receiver's back: it does not poll, so it tells no one
        long start = System.nanoTime();
        NetRequest s = IbTestSupport.send(p, src, 0, smh);
        NetException e = awaitFailure(plugin, s, NetResult.REMOTE_ERROR);
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms < BOUND_MS, ms + " ms");
        assertNotNull(e.getMessage());
        // the receiver learns it from the sender's ABORT (or its own flushed receive)
        awaitFailure(plugin, r, NetResult.REMOTE_ERROR);
        p.close();
    }

    @Test
    void exhaustedRetriesFailSendsWithTheQueuePairsError() throws Exception {
        IbNetPlugin quick = IbTestSupport.plugin(IbConfig.NCCL_IB_TIMEOUT, "8", IbConfig.NCCL_IB_RETRY_CNT, "1",
                IbConfig.JCCL_IB_PEER_TIMEOUT_MS, "120000");
        try {
            IbTestSupport.Pair p = IbTestSupport.connect(quick, quick);
            MemorySegment src = pattern(arena, 4096, 2);
            MemorySegment dst = arena.allocate(4096, 4096);
            NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0},
                    new MemoryHandle[] {reg(quick, p.recv(), dst)});
            Thread.sleep(500);
            ((IbComm) p.recv()).qps[0].toError();
            NetRequest s = IbTestSupport.send(p, src, 0, reg(quick, p.send(), src));
            NetException e = awaitFailure(quick, s, NetResult.REMOTE_ERROR);
            assertTrue(e.getMessage().contains("status"), "the work completion's error: " + e.getMessage());
            awaitFailure(quick, r, NetResult.REMOTE_ERROR);
            p.close();
        } finally {
            quick.close();
        }
    }

    @Test
    void aFatalAsyncEventFailsTheCommAndItsPeer() throws Exception {
        IbNetPlugin own = IbTestSupport.plugin(IbConfig.JCCL_IB_PEER_TIMEOUT_MS, Integer.toString(PEER_TIMEOUT_MS));
        try {
            IbTestSupport.Pair p = IbTestSupport.connect(own, own);
            MemorySegment dst = arena.allocate(4096, 4096);
            NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0},
                    new MemoryHandle[] {reg(own, p.recv(), dst)});
            IbComm recv = (IbComm) p.recv();
            // the async-event thread's routing: the event names the receiver's queue pair
            recv.hca.dispatch(Ibv.EVENT_QP_FATAL, recv.qps[0].qp.address(), 0);
            awaitFailure(own, r, NetResult.SYSTEM_ERROR);
            MemorySegment src = pattern(arena, 100, 0);
            MemoryHandle smh = reg(own, p.send(), src);
            long start = System.nanoTime();
            NetException e = assertThrows(NetException.class, () -> {
                while (true) {
                    NetRequest s = own.isend(p.send(), src, 0, smh);
                    if (s != null) {
                        await(own, s);
                    }
                    assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(BOUND_MS), "no failure");
                }
            });
            assertEquals(NetResult.REMOTE_ERROR, e.result(), e.getMessage());

            recv.hca.dispatch(Ibv.EVENT_DEVICE_FATAL, 0, 0);
            assertEquals(NetResult.SYSTEM_ERROR,
                    assertThrows(NetException.class, () -> own.listen(0, NetHandle.allocate())).result());
            p.close();
        } finally {
            own.close();
        }
    }

    // ---- a peer process that is killed ----

    /** A peer JVM and everything it prints, collected as it goes (for the failure message). */
    private record Peer(Process process, StringBuffer output, java.util.concurrent.CountDownLatch ready) {
        boolean isAlive() {
            return process.isAlive();
        }

        String said() {
            return "\n--- the peer process printed:\n" + output;
        }
    }

    private static Peer startPeer(Path dir, String... args) throws Exception {
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                PeerProcess.class.getName()));
        cmd.add(args[0]);
        cmd.add(dir.toString());
        cmd.addAll(List.of(args).subList(1, args.length));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        Peer peer = new Peer(p, new StringBuffer(), new java.util.concurrent.CountDownLatch(1));
        Thread.ofPlatform().daemon().name("peer-output").start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.equals("READY")) {
                        peer.ready().countDown();
                    }
                    peer.output().append(line).append('\n');
                }
            } catch (java.io.IOException ignored) {
                // the process is gone
            }
        });
        return peer;
    }

    private static void awaitReady(Peer p) throws Exception {
        long deadline = System.nanoTime() + IbTestSupport.DEADLINE_NANOS;
        while (!p.ready().await(50, TimeUnit.MILLISECONDS)) {
            assertTrue(p.isAlive(), "the peer process ended before READY" + p.said());
            assertTrue(System.nanoTime() < deadline, "the peer process never got READY" + p.said());
        }
    }

    private static void awaitFile(Path f, Peer p) throws InterruptedException {
        long deadline = System.nanoTime() + IbTestSupport.DEADLINE_NANOS;
        while (!Files.exists(f)) {
            assertTrue(p.isAlive(), "the peer process died" + p.said());
            assertTrue(System.nanoTime() < deadline, "no handle from the peer process" + p.said());
            Thread.sleep(20);
        }
    }

    @Test
    void killingTheReceiverProcessFailsEveryPendingSendWithinTheBound(@TempDir Path dir) throws Exception {
        // 4 x 64 MiB in flight: with 4 x 16 MiB, SoftRoCE once moved it all before the kill took
        // effect (CI, 2026-11-27), and no send was left to fail.
        long size = 64L << 20;
        Peer peer = startPeer(dir, "receiver", "4", Long.toString(size));
        try {
            awaitFile(dir.resolve("handle"), peer);
            NetHandle handle = NetHandle.fromBytes(Files.readAllBytes(dir.resolve("handle")));
            SendComm send;
            long deadline = System.nanoTime() + IbTestSupport.DEADLINE_NANOS;
            while ((send = plugin.connect(0, handle)) == null) {
                assertTrue(System.nanoTime() < deadline, "no connection to the peer process" + peer.said());
            }
            awaitReady(peer);
            MemorySegment src = arena.allocate(size, 4096);
            MemoryHandle smh = reg(plugin, send, src);
            List<NetRequest> sends = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                NetRequest s;
                while ((s = plugin.isend(send, src, 0, smh)) == null) {
                    Thread.onSpinWait();
                }
                sends.add(s);
            }
            peer.process().destroyForcibly();
            long start = System.nanoTime();
            int failed = 0;
            for (NetRequest s : sends) {
                try {
                    while (!plugin.test(s, null)) {
                        assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(BOUND_MS),
                                "a send neither completed nor failed within the bound");
                    }
                } catch (NetException e) {
                    assertEquals(NetResult.REMOTE_ERROR, e.result(), e.getMessage());
                    failed++;
                }
            }
            assertTrue(failed > 0, "256 MiB cannot all have arrived before the kill");
            SendComm s = send;
            assertEquals(NetResult.REMOTE_ERROR,
                    assertThrows(NetException.class, () -> plugin.isend(s, src, 0, smh)).result());
            plugin.closeSend(send);
        } finally {
            peer.process().destroyForcibly().waitFor();
        }
    }

    @Test
    void killingTheSenderProcessFailsThePendingReceiveWithinTheBound(@TempDir Path dir) throws Exception {
        NetHandle handle = NetHandle.allocate();
        ListenComm listen = plugin.listen(0, handle);
        Files.write(dir.resolve("handle"), handle.toByteArray());
        Peer peer = startPeer(dir, "sender");
        try {
            RecvComm recv;
            long deadline = System.nanoTime() + IbTestSupport.DEADLINE_NANOS;
            while ((recv = plugin.accept(listen)) == null) {
                assertTrue(System.nanoTime() < deadline, "the peer process never connected" + peer.said());
                assertTrue(peer.isAlive(), "the peer process died" + peer.said());
            }
            awaitReady(peer);
            MemorySegment dst = arena.allocate(4096, 4096);
            NetRequest r = plugin.irecv(recv, 1, new MemorySegment[] {dst}, new int[] {0},
                    new MemoryHandle[] {reg(plugin, recv, dst)});
            assertNotNull(r);
            peer.process().destroyForcibly();
            long start = System.nanoTime();
            awaitFailure(plugin, r, NetResult.REMOTE_ERROR);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < BOUND_MS, ms + " ms");
            plugin.closeRecv(recv);
        } finally {
            peer.process().destroyForcibly().waitFor();
            plugin.closeListen(listen);
        }
    }
}

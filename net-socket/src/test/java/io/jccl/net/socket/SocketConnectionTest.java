package io.jccl.net.socket;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

class SocketConnectionTest {

    @Test
    void listenConnectAndAcceptNeverBlock() throws NetException {
        try (Loopback lo = new Loopback()) {
            NetHandle h = NetHandle.allocate();
            long t0 = System.nanoTime();
            ListenComm l = lo.plugin.listen(0, h);
            long slowest = System.nanoTime() - t0;
            SendComm s = null;
            RecvComm r = null;
            long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
            while (s == null || r == null) {
                long c0 = System.nanoTime();
                if (s == null) {
                    s = lo.plugin.connect(0, h);
                }
                long c1 = System.nanoTime();
                if (r == null) {
                    r = lo.plugin.accept(l);
                }
                slowest = Math.max(slowest, Math.max(c1 - c0, System.nanoTime() - c1));
                assertTrue(System.currentTimeMillis() < deadline, "connection did not complete");
            }
            assertTrue(slowest < TimeUnit.MILLISECONDS.toNanos(200), "slowest call took "
                    + TimeUnit.NANOSECONDS.toMicros(slowest) + " us");
            assertNull(lo.plugin.accept(l), "no second comm appears from nowhere");
        }
    }

    @Test
    void oneListenCommServesManyConnectionsFromCopiedHandles() throws NetException {
        try (Loopback lo = new Loopback()) {
            NetHandle h = NetHandle.allocate();
            ListenComm l = lo.plugin.listen(0, h);
            byte[] bytes = h.toByteArray();
            int n = 12;
            List<SendComm> sends = new ArrayList<>();
            List<RecvComm> recvs = new ArrayList<>();
            NetHandle[] copies = new NetHandle[n];
            for (int i = 0; i < n; i++) {
                copies[i] = NetHandle.fromBytes(bytes);
            }
            long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
            boolean[] connected = new boolean[n];
            while (sends.size() < n || recvs.size() < n) {
                for (int i = 0; i < n; i++) {
                    if (!connected[i]) {
                        SendComm s = lo.plugin.connect(0, copies[i]);
                        if (s != null) {
                            connected[i] = true;
                            sends.add(s);
                        }
                    }
                }
                RecvComm r = lo.plugin.accept(l);
                if (r != null) {
                    recvs.add(r);
                }
                assertTrue(System.currentTimeMillis() < deadline, sends.size() + " connected, " + recvs.size() + " accepted");
            }
            assertEquals(n, sends.size());
            assertEquals(n, recvs.size());
            assertPairsCarryTheirOwnData(lo, sends, recvs);
        }
    }

    /** Each send comm is connected to exactly one receive comm: a token sent on each arrives once. */
    private static void assertPairsCarryTheirOwnData(Loopback lo, List<SendComm> sends, List<RecvComm> recvs)
            throws NetException {
        int n = sends.size();
        MemorySegment src = lo.allocate(8L * n);
        MemorySegment dst = lo.allocate(8L * n);
        NetRequest[] rr = new NetRequest[n];
        for (int i = 0; i < n; i++) {
            rr[i] = lo.recv(recvs.get(i), dst.asSlice(8L * i, 8), 0, lo.register(recvs.get(i), dst));
        }
        NetRequest[] ss = new NetRequest[n];
        for (int i = 0; i < n; i++) {
            src.set(ValueLayout.JAVA_LONG, 8L * i, 1000 + i);
            ss[i] = lo.send(sends.get(i), src.asSlice(8L * i, 8), 0, lo.register(sends.get(i), src));
        }
        NetRequest[] all = new NetRequest[2 * n];
        System.arraycopy(ss, 0, all, 0, n);
        System.arraycopy(rr, 0, all, n, n);
        lo.awaitAll(all);
        long seen = 0;
        for (int i = 0; i < n; i++) {
            long token = dst.get(ValueLayout.JAVA_LONG, 8L * i) - 1000;
            assertTrue(token >= 0 && token < n, "token " + token);
            seen |= 1L << token;
        }
        assertEquals((1L << n) - 1, seen, "every connection delivered exactly its own token");
    }

    @Test
    void connectionsSetUpFromSeveralThreadsAtOnce() throws Exception {
        try (Loopback lo = new Loopback()) {
            NetHandle h = NetHandle.allocate();
            ListenComm l = lo.plugin.listen(0, h);
            int n = 8;
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<SendComm>> futures = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    futures.add(pool.submit(() -> {
                        NetHandle mine = h.copy();
                        SendComm s;
                        long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
                        while ((s = lo.plugin.connect(0, mine)) == null) {
                            if (System.currentTimeMillis() > deadline) {
                                throw new AssertionError("connect did not complete");
                            }
                            Thread.onSpinWait();
                        }
                        return s;
                    }));
                }
                List<RecvComm> recvs = new ArrayList<>();
                long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
                while (recvs.size() < n) {
                    RecvComm r = lo.plugin.accept(l);
                    if (r != null) {
                        recvs.add(r);
                    }
                    assertTrue(System.currentTimeMillis() < deadline, recvs.size() + " accepted");
                }
                List<SendComm> sends = new ArrayList<>();
                for (Future<SendComm> f : futures) {
                    sends.add(f.get(Loopback.DEADLINE_MS, TimeUnit.MILLISECONDS));
                }
                assertPairsCarryTheirOwnData(lo, sends, recvs);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void garbageStrayAndUnauthenticatedConnectionsAreDroppedWithoutWedgingTheListener() throws Exception {
        try (Loopback lo = new Loopback(Map.of(SocketConfig.JCCL_SOCKET_CONNECT_TIMEOUT_MS, "500"))) {
            NetHandle h = NetHandle.allocate();
            ListenComm l = lo.plugin.listen(0, h);
            InetSocketAddress target = ((SocketListenComm) l).address;
            try (Socket garbage = new Socket(target.getAddress(), target.getPort());
                 Socket wrongSecret = new Socket(target.getAddress(), target.getPort());
                 Socket silent = new Socket(target.getAddress(), target.getPort())) {
                garbage.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n....".getBytes());
                ByteBuffer forged = Handshake.encode(0, 0, new byte[SocketHandle.SECRET_BYTES], 42);
                wrongSecret.getOutputStream().write(forged.array());

                NetHandle copy = h.copy();
                SendComm s = null;
                RecvComm r = null;
                long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
                while (s == null || r == null) {
                    if (s == null) {
                        s = lo.plugin.connect(0, copy);
                    }
                    if (r == null) {
                        r = lo.plugin.accept(l);
                    }
                    assertTrue(System.currentTimeMillis() < deadline, "the real connection was not accepted");
                }
                assertPairsCarryTheirOwnData(lo, List.of(s), List.of(r));
                for (Socket bad : List.of(garbage, wrongSecret, silent)) {
                    assertClosedByPeer(lo, l, bad);
                }
            }
        }
    }

    /** Keeps the listener turning until it has closed {@code bad}. */
    private static void assertClosedByPeer(Loopback lo, ListenComm l, Socket bad) throws Exception {
        bad.setSoTimeout(50);
        InputStream in = bad.getInputStream();
        long deadline = System.currentTimeMillis() + 5_000;
        while (System.currentTimeMillis() < deadline) {
            assertEquals(null, lo.plugin.accept(l), "a bad connection never becomes a comm");
            try {
                if (in.read() < 0) {
                    return;
                }
            } catch (java.net.SocketTimeoutException e) {
                // Not closed yet.
            } catch (java.net.SocketException e) {
                return; // reset by the listener
            }
        }
        fail("the listener did not drop a bad connection");
    }

    @Test
    void aHandleThatIsNotJcclSocketsIsRejected() throws NetException {
        try (Loopback lo = new Loopback()) {
            NetHandle junk = NetHandle.fromBytes("definitely not a handle".getBytes());
            NetException e = assertThrows(NetException.class, () -> lo.plugin.connect(0, junk));
            assertSame(NetResult.INVALID_ARGUMENT, e.result());
            NetHandle h = NetHandle.allocate();
            lo.plugin.listen(0, h);
            h.segment().set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 6, (short) 0);
            assertSame(NetResult.INVALID_ARGUMENT, assertThrows(NetException.class, () -> lo.plugin.connect(0, h)).result());
        }
    }

    /**
     * A handle from a build of another wire version (version 2 had 16 EAGER slots, and would fail
     * a version-3 sender mid-run) is refused at connect, naming both versions.
     */
    @Test
    void aHandleOfAnotherProtocolVersionIsRefusedAtConnect() throws NetException {
        try (Loopback lo = new Loopback()) {
            NetHandle h = NetHandle.allocate();
            lo.plugin.listen(0, h);
            h.segment().set(ValueLayout.JAVA_BYTE, 4, (byte) (SocketHandle.VERSION - 1));
            NetException e = assertThrows(NetException.class, () -> lo.plugin.connect(0, h));
            assertSame(NetResult.INVALID_ARGUMENT, e.result());
            assertTrue(e.getMessage().contains("handle version " + (SocketHandle.VERSION - 1)
                    + " is not supported (this build speaks " + SocketHandle.VERSION + ")"), e.getMessage());
        }
    }

    @Test
    void connectingToAClosedListenerFailsAfterItsRetries() throws NetException {
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_RETRY_CNT, "3",
                SocketConfig.NCCL_SOCKET_RETRY_SLEEP_MSEC, "10"))) {
            NetHandle h = NetHandle.allocate();
            lo.plugin.closeListen(lo.plugin.listen(0, h));
            long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
            NetException e = assertThrows(NetException.class, () -> {
                while (lo.plugin.connect(0, h) == null) {
                    if (System.currentTimeMillis() > deadline) {
                        fail("connect kept returning null");
                    }
                }
            });
            assertSame(NetResult.SYSTEM_ERROR, e.result());
            assertTrue(e.getMessage().contains("after 3 retries"), e.getMessage());
        }
    }

    @Test
    void connectingToAClosedListenerGivesUpWithinTheTimeout() throws NetException {
        try (Loopback lo = new Loopback(Map.of(SocketConfig.JCCL_SOCKET_CONNECT_TIMEOUT_MS, "1000"))) {
            NetHandle h = NetHandle.allocate();
            lo.plugin.closeListen(lo.plugin.listen(0, h));
            long t0 = System.nanoTime();
            NetException e = assertThrows(NetException.class, () -> {
                while (lo.plugin.connect(0, h) == null) {
                    Thread.onSpinWait();
                }
            });
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertSame(NetResult.SYSTEM_ERROR, e.result());
            assertTrue(ms >= 900 && ms < 3_000, "gave up after " + ms + " ms with a 1000 ms bound");
        }
    }

    @Test
    void ipv6DevicesWorkWhenAskedForWithNcclSocketFamily() throws NetException {
        Loopback lo;
        try {
            lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_FAMILY, "AF_INET6"));
        } catch (NetException e) {
            org.junit.jupiter.api.Assumptions.abort("no interface here has a global IPv6 address: " + e.getMessage());
            return;
        }
        try (lo) {
            Loopback.Pair p = lo.pair();
            String peer = ((SocketComm) p.send()).peer;
            assertTrue(peer.contains(":") && peer.indexOf(':') != peer.lastIndexOf(':'), "an IPv6 peer: " + peer);
            MemorySegment m = lo.allocate(100_000);
            Loopback.fillPattern(m, 5);
            MemorySegment d = lo.allocate(100_000);
            NetRequest r = lo.recv(p.recv(), d, 0, lo.register(p.recv(), d));
            lo.awaitAll(lo.send(p.send(), m, 0, lo.register(p.send(), m)), r);
            assertEquals(Loopback.checksum(m, 100_000), Loopback.checksum(d, 100_000));
        }
    }

    @Test
    void theDeviceListFollowsNcclSocketIfname() throws NetException {
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_IFNAME, "=lo"))) {
            assertEquals(1, lo.plugin.devices());
            assertEquals("lo", lo.plugin.getProperties(0).name());
            // Loopback works as a device when asked for explicitly.
            Loopback.Pair p = lo.pair();
            MemorySegment m = lo.allocate(64);
            MemoryHandle sm = lo.register(p.send(), m);
            MemoryHandle rm = lo.register(p.recv(), m);
            NetRequest r = lo.recv(p.recv(), m, 0, rm);
            lo.awaitAll(lo.send(p.send(), m, 0, sm), r);
        }
        NetException none = assertThrows(NetException.class,
                () -> new Loopback(Map.of(SocketConfig.NCCL_SOCKET_IFNAME, "=nosuchif0")));
        assertTrue(none.getMessage().contains("NCCL_SOCKET_IFNAME==nosuchif0"), none.getMessage());
    }
}

package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.SendComm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Dead peers, stuck peers, closes in flight and misuse: every request ends, with an error, in bounded time. */
class SocketFaultTest {

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "2x2"})
    void whenThePeerProcessIsKilledEveryPendingRequestFailsPromptly(String layout) throws Exception {
        String[] tp = layout.split("x");
        Map<String, String> variables = Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0],
                SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1]);
        try (Loopback lo = new Loopback(variables); RemotePeer peer = new RemotePeer(lo, variables, "idle")) {
            MemorySegment big = lo.allocate(64L << 20);
            NetRequest sending = lo.send(peer.send, big, 0, lo.register(peer.send, big));
            NetRequest receiving = lo.recv(peer.recv, big.asSlice(0, 1 << 20), 0, lo.register(peer.recv, big));
            for (int i = 0; i < 100; i++) {
                assertTrue(!lo.plugin.test(sending, null) && !lo.plugin.test(receiving, null),
                        "the peer never reads nor sends, so nothing completes");
            }
            long killed = System.nanoTime();
            peer.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            Loopback.Outcome[] o = lo.settle(sending, receiving);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            for (Loopback.Outcome outcome : o) {
                assertNotNull(outcome.error(), "a request of a dead peer must fail");
                assertSame(NetResult.REMOTE_ERROR, outcome.error().result(), outcome.error().toString());
            }
            assertTrue(ms < 5_000, "failed after " + ms + " ms; a peer that exits is seen at once");
        }
    }

    @Test
    void aPeerThatStopsReadingIsDetectedWithinTheTimeout() throws NetException {
        try (Loopback lo = new Loopback(Map.of(SocketConfig.JCCL_SOCKET_TIMEOUT_MS, "1000"))) {
            Loopback.Pair p = lo.pair();
            MemorySegment big = lo.allocate(64L << 20);
            NetRequest recv = lo.recv(p.recv(), big, 0, lo.register(p.recv(), big));
            NetRequest send = lo.send(p.send(), big, 0, lo.register(p.send(), big));
            long t0 = System.nanoTime();
            // Only the sender is progressed: the receiver is "stuck".
            NetException e = assertThrows(NetException.class, () -> lo.awaitAll(send));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertSame(NetResult.REMOTE_ERROR, e.result());
            assertTrue(e.getMessage().contains("accepted no data"), e.getMessage());
            assertTrue(ms >= 900 && ms < 3_000, "detected after " + ms + " ms with a 1000 ms bound");
            assertThrows(NetException.class, () -> lo.plugin.isend(p.send(), big, 0, null),
                    "a failed comm refuses new work");
            assertNotNull(recv);
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "2x2"})
    void closingWithRequestsInFlightIsSafeAndFailsThePeersRequests(String layout) throws NetException {
        String[] tp = layout.split("x");
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0],
                SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1]))) {
            Loopback.Pair p = lo.pair();
            // More than the sockets' buffers take (loopback autotuning reaches several MiB a
            // socket, and 4 streams of 4 MiB messages once fit whole), so that bytes are still on
            // the sender's side when it closes.
            long message = 16L << 20;
            MemorySegment src = lo.allocate(8 * message);
            MemorySegment dst = lo.allocate(8 * message);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            NetRequest[] recvs = new NetRequest[8];
            NetRequest[] sends = new NetRequest[8];
            for (int i = 0; i < 8; i++) {
                recvs[i] = lo.recv(p.recv(), dst.asSlice(i * message, message), 0, rm);
            }
            for (int i = 0; i < 8; i++) {
                sends[i] = lo.send(p.send(), src.asSlice(i * message, message), 0, sm);
            }
            lo.plugin.test(recvs[0], null);
            lo.plugin.closeSend(p.send());
            assertTrue(noWorkerThreadsOf(p.send()), "closing stops the comm's I/O threads");
            Loopback.Outcome[] o = lo.settle(recvs);
            int failed = 0;
            for (Loopback.Outcome outcome : o) {
                failed += outcome.error() != null ? 1 : 0;
            }
            assertTrue(failed > 0, "the receiver's requests that cannot complete fail");
            assertSame(NetResult.REMOTE_ERROR, o[7].error().result(), String.valueOf(o[7].error()));
            lo.plugin.closeRecv(p.recv());
            lo.plugin.closeListen(p.listen());
            assertThrows(NetException.class, () -> lo.plugin.isend(p.send(), src, 0, sm), "closed comms refuse work");
        }
    }

    /**
     * A request reported failed hands its memory back: the caller may free it at once. Here the
     * receiver goes away in the middle of a 64 MiB send, the sender's request fails, and its memory
     * is freed on the spot; if this fails with "Session is acquired", an I/O thread was still
     * moving the failed request's bytes when the failure was reported.
     */
    @Test
    void aFailedRequestsMemoryIsFreeTheMomentItsFailureIsReported() throws NetException {
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, "2",
                SocketConfig.NCCL_NSOCKS_PERTHREAD, "2"))) {
            for (int round = 0; round < 5; round++) {
                Loopback.Pair p = lo.pair();
                Arena sendersMemory = Arena.ofShared();
                MemorySegment src = sendersMemory.allocate(64L << 20, 64);
                MemorySegment dst = lo.allocate(64L << 20);
                NetRequest recv = lo.recv(p.recv(), dst, 0, lo.register(p.recv(), dst));
                NetRequest send = lo.send(p.send(), src, 0, lo.register(p.send(), src));
                lo.plugin.test(recv, null);
                lo.plugin.test(send, null);
                lo.plugin.closeRecv(p.recv());
                Loopback.Outcome sent = lo.settle(send)[0];
                if (sent.error() != null) {
                    assertTrue(noWorkerThreadsOf(p.send()), "a failure is reported after the comm's I/O threads stop");
                }
                sendersMemory.close();
                lo.plugin.closeSend(p.send());
                lo.plugin.closeListen(p.listen());
            }
        }
    }

    private static boolean noWorkerThreadsOf(SendComm comm) {
        // This comm's own threads, not the name: another comm's threads may carry the same peer
        // address (a port reused after an earlier test).
        return !((SocketComm) comm).anyIoThreadAlive();
    }

    @Test
    void misuseGetsClearErrors() throws NetException {
        try (Loopback lo = new Loopback(); Arena confined = Arena.ofConfined()) {
            Loopback.Pair p = lo.pair();
            MemorySegment m = lo.allocate(4096);
            MemoryHandle mh = lo.register(p.send(), m);
            assertSame(NetResult.INVALID_USAGE,
                    assertThrows(NetException.class, () -> lo.plugin.regMr(p.send(), m, PointerType.CUDA)).result());
            assertSame(NetResult.INVALID_ARGUMENT, assertThrows(NetException.class,
                    () -> lo.plugin.regMr(p.send(), confined.allocate(64), PointerType.HOST)).result());
            assertSame(NetResult.INVALID_ARGUMENT, assertThrows(NetException.class,
                    () -> lo.plugin.regMr(p.send(), MemorySegment.ofArray(new byte[64]), PointerType.HOST)).result());
            assertSame(NetResult.INVALID_ARGUMENT, assertThrows(NetException.class,
                    () -> lo.plugin.deregMr(p.recv(), mh)).result(), "a handle of another comm");
            lo.plugin.deregMr(p.send(), mh);
            assertSame(NetResult.INVALID_ARGUMENT, assertThrows(NetException.class,
                    () -> lo.plugin.deregMr(p.send(), mh)).result(), "a handle released twice");
            assertSame(NetResult.INTERNAL_ERROR, assertThrows(NetException.class,
                    () -> lo.plugin.irecv(p.recv(), 9, new MemorySegment[9], new int[9], new MemoryHandle[9])).result());
            MemoryHandle rm = lo.register(p.recv(), m);
            assertSame(NetResult.INVALID_ARGUMENT, assertThrows(NetException.class,
                    () -> lo.plugin.irecv(p.recv(), 1, new MemorySegment[] {lo.allocate(16)}, new int[1],
                            new MemoryHandle[] {rm})).result(), "a buffer outside its registration");
            assertNull(lo.plugin.iflush(p.recv(), 1, new MemorySegment[] {m}, new MemoryHandle[] {rm}),
                    "host memory needs no flush");
            NetRequest r = lo.recv(p.recv(), m, 0, rm);
            MemoryHandle sm = lo.register(p.send(), m);
            lo.awaitAll(lo.send(p.send(), m, 0, sm), r);
            assertSame(NetResult.INTERNAL_ERROR, assertThrows(NetException.class, () -> lo.plugin.test(r, null)).result(),
                    "testing a request after it was reported done");
        }
    }
}

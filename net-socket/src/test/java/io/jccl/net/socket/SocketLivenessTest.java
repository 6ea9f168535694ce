package io.jccl.net.socket;

import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Heartbeats: a peer frozen with SIGSTOP (whose kernel still acknowledges TCP) fails every pending
 * request within the bound; a peer paused for less than the bound, or alive but posting its side
 * late, is never declared dead, and a process's own pause is not blamed on its peer.
 */
class SocketLivenessTest {
    private static final long BOUND_MS = 2000;
    /** The heartbeat interval of that bound (a fifth of it). */
    private static final long INTERVAL_MS = BOUND_MS / 5;

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "2x2"})
    void aFrozenPeerFailsThePendingReceiveAndSendWithinTheBound(String layout) throws Exception {
        String[] tp = layout.split("x");
        Map<String, String> variables = Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0],
                SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1], SocketConfig.JCCL_SOCKET_TIMEOUT_MS, Long.toString(BOUND_MS));
        try (Loopback lo = new Loopback(variables); RemotePeer peer = new RemotePeer(lo, variables, "active")) {
            MemorySegment in = lo.allocate(1 << 20);
            MemorySegment out = lo.allocate(64L << 20);
            NetRequest receiving = lo.recv(peer.recv, in, 0, lo.register(peer.recv, in));
            assertFalse(lo.plugin.test(receiving, null), "the peer sends nothing");

            peer.signal("STOP");
            long frozen = System.nanoTime();
            // The peer posted its receive before it froze, so the send starts, and its kernel takes
            // what fits in the socket buffers.
            NetRequest sending = lo.send(peer.send, out, 0, lo.register(peer.send, out));
            Loopback.Outcome[] o = lo.settle(receiving, sending);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozen);

            for (Loopback.Outcome outcome : o) {
                assertNotNull(outcome.error(), "a request of a frozen peer must fail");
                assertSame(NetResult.REMOTE_ERROR, outcome.error().result(), outcome.error().toString());
                assertTrue(outcome.error().getMessage().contains("JCCL_SOCKET_TIMEOUT_MS"), outcome.error().getMessage());
            }
            String message = o[0].error().getMessage();
            assertTrue(message.contains("sent no heartbeat") && message.contains(((SocketComm) peer.recv).peer)
                    && message.contains("frozen, dead or unreachable"), message);
            // Its last heartbeat left up to an interval before the freeze (later on a loaded machine).
            assertTrue(ms >= BOUND_MS - 2 * INTERVAL_MS, "declared dead after " + ms + " ms, before the "
                    + BOUND_MS + " ms bound");
            assertTrue(ms <= BOUND_MS + INTERVAL_MS + 1000, "detected after " + ms + " ms with a " + BOUND_MS
                    + " ms bound");
        }
    }

    @Test
    void aPeerPausedForLessThanTheBoundIsNotDeclaredDead() throws Exception {
        // A stop-the-world GC, as the survivor sees it: the peer's threads, its heartbeats included, stop.
        Map<String, String> variables = Map.of(SocketConfig.JCCL_SOCKET_TIMEOUT_MS, Long.toString(BOUND_MS));
        try (Loopback lo = new Loopback(variables); RemotePeer peer = new RemotePeer(lo, variables, "active")) {
            MemorySegment in = lo.allocate(1 << 20);
            MemorySegment out = lo.allocate(1 << 20);
            NetRequest receiving = lo.recv(peer.recv, in, 0, lo.register(peer.recv, in));
            peer.signal("STOP");
            long stopped = System.nanoTime();
            try {
                while (System.nanoTime() - stopped < TimeUnit.MILLISECONDS.toNanos(BOUND_MS / 2)) {
                    assertFalse(lo.plugin.test(receiving, null), "the peer sends nothing");
                }
            } finally {
                peer.signal("CONT");
            }
            long resumed = System.nanoTime();
            while (System.nanoTime() - resumed < TimeUnit.MILLISECONDS.toNanos(BOUND_MS)) {
                assertFalse(lo.plugin.test(receiving, null), "the peer sends nothing, and is alive again");
            }
            NetRequest sending = lo.send(peer.send, out, 0, lo.register(peer.send, out));
            assertNull(lo.settle(sending)[0].error(), "the resumed peer takes the data");
        }
    }

    @Test
    void aProcessPausedLongerThanItsBoundResumesWithoutBlamingItsPeer() throws Exception {
        // The peer process is the one paused here (a GC of twice its bound); on resuming, it must not
        // judge this side by heartbeats that wait, unread, in its kernel. (Its caller and its liveness
        // thread resume together, so a rule that judged by the clock would mostly pass too: this
        // checks the outcome, not that race.) This side's own bound (the default) is longer than the
        // pause, so it does not fail either.
        Map<String, String> paused = Map.of(SocketConfig.JCCL_SOCKET_TIMEOUT_MS, Long.toString(BOUND_MS));
        try (Loopback lo = new Loopback(Map.of()); RemotePeer peer = new RemotePeer(lo, paused, "survivor")) {
            peer.signal("STOP");
            try {
                Thread.sleep(2 * BOUND_MS);
            } finally {
                peer.signal("CONT");
            }
            MemorySegment out = lo.allocate(1 << 20);
            NetRequest sending = lo.send(peer.send, out, 0, lo.register(peer.send, out));
            assertNull(lo.settle(sending)[0].error());
            peer.expect("RECEIVED");
        }
    }

    @Test
    void anIdlePeerThatPostsItsSideLongAfterTheBoundIsNotDeclaredDead() throws Exception {
        long bound = 1000;
        long late = 3 * bound;
        Map<String, String> variables = Map.of(SocketConfig.JCCL_SOCKET_TIMEOUT_MS, Long.toString(bound));
        try (Loopback lo = new Loopback(variables);
             RemotePeer peer = new RemotePeer(lo, variables, "late", Long.toString(late))) {
            MemorySegment in = lo.allocate(1 << 20);
            MemorySegment out = lo.allocate(1 << 20);
            Loopback.fillPattern(out, 3);
            var outHandle = lo.register(peer.send, out);
            long t0 = System.nanoTime();
            NetRequest receiving = lo.recv(peer.recv, in, 0, lo.register(peer.recv, in));
            NetRequest sending;
            // Until the peer posts its receive, isend has nothing to send into; neither call may fail.
            while ((sending = lo.plugin.isend(peer.send, out, 0, outHandle)) == null) {
                assertFalse(lo.plugin.test(receiving, null), "the peer has sent nothing yet");
                assertTrue(System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(Loopback.DEADLINE_MS),
                        "the peer never posted its receive");
            }
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(waited >= late - 500, "the peer posted after " + waited + " ms, expected about " + late);
            Loopback.Outcome[] o = lo.settle(receiving, sending);
            assertNull(o[0].error());
            assertNull(o[1].error());
            assertEquals(1 << 20, o[0].sizes()[0]);
            MemorySegment expected = lo.allocate(1 << 20);
            Loopback.fillPattern(expected, 7);
            assertArrayEquals(expected.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                    in.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), "the late peer's data");
            peer.expect("DONE");
        }
    }

    @Test
    void theHeartbeatIsEverySecondOrAFifthOfAShorterBound() {
        for (String[] boundAndInterval : new String[][] {{"15000", "1000"}, {"5000", "1000"}, {"2000", "400"}}) {
            System.setProperty(SocketConfig.JCCL_SOCKET_TIMEOUT_MS, boundAndInterval[0]);
            try {
                assertEquals(Long.parseLong(boundAndInterval[1]),
                        SocketConfig.fromEnvironment().heartbeatInterval().toMillis(), boundAndInterval[0] + " ms bound");
            } finally {
                System.clearProperty(SocketConfig.JCCL_SOCKET_TIMEOUT_MS);
            }
        }
    }
}

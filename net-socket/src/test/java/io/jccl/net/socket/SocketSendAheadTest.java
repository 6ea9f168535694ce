package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Sends larger than an EAGER slot ahead of their CTS ({@link Wire#FLAG_AHEAD}): once the receiver
 * has posted a one-buffer receive of a tag and size, a send of that tag and at most that size
 * starts before the next receive is posted, and lands in it intact: inline, after its frame on the
 * control stream, or over the data streams. A larger one still waits for its CTS; one whose
 * receive turns out smaller fails both comms. If these fail, check
 * {@code SocketSendComm.goesAhead} and {@code SocketRecvComm.takeSentAhead}.
 */
class SocketSendAheadTest {
    private static final int BUFFER = 256 << 10;

    @ParameterizedTest(name = "{0} bytes, threads x streams = {1}")
    @CsvSource({"8192, 0x1", "200000, 0x1", "8192, 2x2", "200000, 2x2", "0, 2x2"})
    void aSendFitsTheReceiversLastBufferGoesBeforeItsReceiveIsPosted(int size, String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(BUFFER);
            MemorySegment dst = lo.allocate(2L * BUFFER);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            // One exchange through the CTS path: the sender learns the receiver's buffer size.
            lo.awaitAll(lo.recv(p.recv(), dst.asSlice(0, BUFFER), 7, rm), lo.send(p.send(), src.asSlice(0, 4096), 7, sm));

            for (int i = 0; i < size / 8; i++) {
                src.set(ValueLayout.JAVA_LONG, i * 8L, 0x5A5A0000L + i);
            }
            NetRequest ahead = lo.plugin.isend(p.send(), src.asSlice(0, size), 7, sm);
            assertNotNull(ahead, "a send that fits the receiver's last buffer starts before its receive is posted");
            NetRequest r = lo.recv(p.recv(), dst.asSlice(BUFFER, BUFFER), 7, rm);
            int[][] sizes = lo.awaitAll(ahead, r);
            assertEquals(size, sizes[1][0], "the receive reports the size sent");
            for (int i = 0; i < size / 8; i++) {
                assertEquals(0x5A5A0000L + i, dst.get(ValueLayout.JAVA_LONG, BUFFER + i * 8L), "word " + i);
            }
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @CsvSource({"0x1", "2x2"})
    void aSendLargerThanTheLastBufferOrOfAnotherTagWaitsForItsReceive(String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(2L * BUFFER);
            MemorySegment dst = lo.allocate(2L * BUFFER);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            lo.awaitAll(lo.recv(p.recv(), dst.asSlice(0, 64 << 10), 3, rm), lo.send(p.send(), src.asSlice(0, 2048), 3, sm));
            assertNull(lo.plugin.isend(p.send(), src.asSlice(0, (64 << 10) + 1), 3, sm),
                    "one byte more than the receiver's last buffer: wait for the CTS");
            assertNull(lo.plugin.isend(p.send(), src.asSlice(0, 4096), 4, sm), "another tag: wait for the CTS");
            NetRequest r = lo.recv(p.recv(), dst.asSlice(0, 2L * BUFFER), 3, rm);
            lo.awaitAll(r, lo.send(p.send(), src.asSlice(0, (64 << 10) + 1), 3, sm));
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @CsvSource({"0x1", "2x2"})
    void aSendAheadOfASmallerReceiveFailsBothComms(String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(BUFFER);
            MemorySegment dst = lo.allocate(BUFFER);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            lo.awaitAll(lo.recv(p.recv(), dst, 0, rm), lo.send(p.send(), src.asSlice(0, 2048), 0, sm));
            NetRequest ahead = lo.plugin.isend(p.send(), src.asSlice(0, 100_000), 0, sm);
            assertNotNull(ahead);
            NetRequest small = lo.recv(p.recv(), dst.asSlice(0, 50_000), 0, rm);
            Loopback.Outcome[] o = lo.settle(small);
            assertNotNull(o[0].error(), "the receive cannot take 100000 bytes into 50000");
            assertSame(NetResult.INVALID_USAGE, o[0].error().result(), o[0].error().getMessage());
            // The sender learns it from that receive's CTS: its next call fails too.
            long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
            NetException sent = null;
            while (sent == null && System.currentTimeMillis() < deadline) {
                try {
                    if (lo.plugin.isend(p.send(), src.asSlice(0, 8), 0, sm) == null) {
                        Thread.onSpinWait();
                    }
                } catch (NetException e) {
                    sent = e;
                }
            }
            assertNotNull(sent, "the sending comm fails once the CTS of the smaller receive arrives");
            assertThrows(NetException.class, () -> lo.plugin.irecv(p.recv(), 1, new MemorySegment[] {dst}, new int[] {0},
                    new MemoryHandle[] {rm}), "the receiving comm failed: it could not skip the bytes");
        }
    }

    /**
     * A send ahead of its receive waits in the sockets, and a large one fills them: the receiver
     * that posts late (computing) is idle, not stuck, and nothing may fail while it sends
     * heartbeats. If this fails with "accepted no data", the stall watchdog counted the time
     * before the receive was posted ({@code SocketSendComm.stallClockFloor}).
     */
    @ParameterizedTest(name = "threads x streams = {0}")
    @CsvSource({"0x1", "2x2"})
    void aReceiverThatPostsLongAfterTheBoundDoesNotFailALargeSendAhead(String layout) throws Exception {
        long bound = 1000;
        int size = 48 << 20; // more than the kernel's socket buffers hold
        String[] tp = layout.split("x");
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0],
                SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1], SocketConfig.JCCL_SOCKET_TIMEOUT_MS, Long.toString(bound)))) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(size);
            MemorySegment dst = lo.allocate(size);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            lo.awaitAll(lo.recv(p.recv(), dst, 0, rm), lo.send(p.send(), src.asSlice(0, 4096), 0, sm));
            Loopback.fillPattern(src, 5);
            NetRequest ahead = lo.plugin.isend(p.send(), src, 0, sm);
            assertNotNull(ahead);
            long until = System.nanoTime() + 3 * bound * 1_000_000L;
            while (System.nanoTime() < until) {
                assertFalse(lo.plugin.test(ahead, null), "48 MiB cannot all be in the sockets yet");
                Thread.sleep(1);
            }
            NetRequest r = lo.recv(p.recv(), dst, 0, rm);
            int[][] sizes = lo.awaitAll(ahead, r);
            assertEquals(size, sizes[1][0]);
            MemorySegment expected = lo.allocate(size);
            Loopback.fillPattern(expected, 5);
            assertEquals(-1, expected.mismatch(dst), "the late receive's data");
        }
    }

    private static Loopback loopback(String layout) throws NetException {
        String[] tp = layout.split("x");
        return new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0], SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1]));
    }
}

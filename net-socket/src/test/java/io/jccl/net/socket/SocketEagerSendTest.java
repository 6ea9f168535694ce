package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.RecvComm;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Small sends ahead of their receive (EAGER frames): they start at once and complete once copied,
 * land where a send posted after the receive would, keep the rules of the CTS path (sizes, tags,
 * too-large sends refused by the receiver and reported to the sender), within the receiver's
 * {@link Wire#EAGER_SLOTS} slots; and the receiver holds its CTS frames back while messages are
 * small, but never so that a sender waits.
 */
class SocketEagerSendTest {

    /**
     * Posts {@code count} receives of {@code stride} bytes each, for messages {@code first} on, into
     * {@code dst} at {@code first * stride} on, and awaits them, never more in flight than half a
     * comm's request slots: for senders whose EAGERs outnumber those slots.
     *
     * @return each receive's sizes
     */
    private static int[][] receiveInWaves(Loopback lo, RecvComm comm, MemorySegment dst, long stride,
                                          MemoryHandle mh, int first, int count) throws NetException {
        int wave = NetPlugin.MAX_REQUESTS / 2;
        int[][] sizes = new int[count][];
        for (int start = 0; start < count; start += wave) {
            NetRequest[] recvs = new NetRequest[Math.min(wave, count - start)];
            for (int i = 0; i < recvs.length; i++) {
                recvs[i] = lo.recv(comm, dst.asSlice((first + start + i) * stride, stride), 0, mh);
            }
            System.arraycopy(lo.awaitAll(recvs), 0, sizes, start, recvs.length);
        }
        return sizes;
    }

    @Test
    void aSmallSendStartsBeforeItsReceiveIsPostedAndCompletesOnceTheReceiveIs() throws NetException {
        try (Loopback lo = new Loopback()) {
            Loopback.Wired w = new Loopback.Wired(lo, 64);
            w.src.set(ValueLayout.JAVA_LONG, 0, 0x1122334455667788L);
            NetRequest s = lo.plugin.isend(w.pair.send(), w.src.asSlice(0, 8), 5, w.sm);
            assertNotNull(s, "an 8-byte send needs no CTS");
            int[] sent = new int[1];
            assertTrue(lo.plugin.test(s, sent), "complete once copied, before any receive is posted");
            assertEquals(8, sent[0]);
            w.src.set(ValueLayout.JAVA_LONG, 0, 0); // the send's buffer is free again
            NetRequest r = lo.recv(w.pair.recv(), w.dst, 5, w.rm);
            int[][] sizes = lo.awaitAll(r);
            assertEquals(8, sizes[0][0]);
            assertEquals(0x1122334455667788L, w.dst.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    @Test
    void atMostEagerSlotsSendsGoAheadThenIsendWaitsForReceives() throws NetException {
        try (Loopback lo = new Loopback()) {
            Loopback.Pair p = lo.pair();
            int n = Wire.EAGER_SLOTS;
            MemorySegment src = lo.allocate((n + 4) * 16L);
            MemorySegment dst = lo.allocate((n + 4) * 16L);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            NetRequest[] sends = new NetRequest[n + 4];
            for (int i = 0; i < n; i++) {
                src.set(ValueLayout.JAVA_INT, i * 16L, 1000 + i);
                sends[i] = lo.plugin.isend(p.send(), src.asSlice(i * 16L, 4 + i % 9), 0, sm);
                assertNotNull(sends[i], "EAGER " + i);
            }
            assertNull(lo.plugin.isend(p.send(), src.asSlice(n * 16L, 4), 0, sm),
                    "the receiver has " + n + " slots: one more must wait for a receive");
            // More EAGERs wait than a comm has receive slots: post the receives a wave at a time.
            int[][] sizes = receiveInWaves(lo, p.recv(), dst, 16, rm, 0, n);
            NetRequest[] last = new NetRequest[4];
            for (int i = n; i < n + 4; i++) {
                last[i - n] = lo.recv(p.recv(), dst.asSlice(i * 16L, 16), 0, rm);
                src.set(ValueLayout.JAVA_INT, i * 16L, 1000 + i);
                sends[i] = lo.send(p.send(), src.asSlice(i * 16L, 4 + i % 9), 0, sm);
            }
            lo.awaitAll(sends);
            int[][] lastSizes = lo.awaitAll(last);
            for (int i = 0; i < n + 4; i++) {
                int size = i < n ? sizes[i][0] : lastSizes[i - n][0];
                assertEquals(4 + i % 9, size, "size of message " + i);
                assertEquals(1000 + i, dst.get(ValueLayout.JAVA_INT, i * 16L), "message " + i + " in posting order");
            }
        }
    }

    @Test
    void eagerSendsFindTheirTagsInAGroupedReceive() throws NetException {
        try (Loopback lo = new Loopback()) {
            Loopback.Wired w = new Loopback.Wired(lo, 64);
            w.src.set(ValueLayout.JAVA_INT, 0, 22);
            w.src.set(ValueLayout.JAVA_INT, 32, 11);
            NetRequest tag2 = lo.plugin.isend(w.pair.send(), w.src.asSlice(0, 4), 2, w.sm);
            NetRequest tag1 = lo.plugin.isend(w.pair.send(), w.src.asSlice(32, 3), 1, w.sm);
            assertNotNull(tag2);
            assertNotNull(tag1);
            NetRequest r = lo.plugin.irecv(w.pair.recv(), 2,
                    new MemorySegment[] {w.dst.asSlice(0, 16), w.dst.asSlice(32, 16)},
                    new int[] {1, 2}, new MemoryHandle[] {w.rm, w.rm});
            int[][] sizes = lo.awaitAll(tag2, tag1, r);
            assertArrayEquals(new int[] {3, 4}, new int[] {sizes[2][0], sizes[2][1]}, "sizes by buffer");
            assertEquals(11, w.dst.get(ValueLayout.JAVA_INT, 0) & 0xffffff, "tag 1 lands in buffer 0");
            assertEquals(22, w.dst.get(ValueLayout.JAVA_INT, 32), "tag 2 lands in buffer 1");
        }
    }

    @Test
    void anEagerSendLargerThanItsReceiveFailsTheReceiveAndThenTheSendingComm() throws NetException {
        try (Loopback lo = new Loopback()) {
            Loopback.Wired w = new Loopback.Wired(lo, 1024);
            NetRequest big = lo.plugin.isend(w.pair.send(), w.src.asSlice(0, 100), 0, w.sm);
            assertNotNull(big);
            assertTrue(lo.plugin.test(big, new int[1]), "an EAGER send completes once copied");
            NetRequest small = lo.recv(w.pair.recv(), w.dst.asSlice(0, 10), 0, w.rm);
            Loopback.Outcome[] o = lo.settle(small);
            assertNotNull(o[0].error(), "the receiver's request fails");
            assertEquals(NetResult.INVALID_USAGE, o[0].error().result());
            assertTrue(o[0].error().getMessage().contains("100 bytes to a 10-byte"), o[0].error().getMessage());
            // The refusal's CTS goes out at once: the sender's next calls fail, naming the send.
            NetException sendSide = null;
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (sendSide == null && System.nanoTime() < deadline) {
                try {
                    NetRequest s = lo.plugin.isend(w.pair.send(), w.src.asSlice(0, 4), 0, w.sm);
                    if (s != null) {
                        lo.plugin.test(s, new int[1]);
                    }
                } catch (NetException e) {
                    sendSide = e;
                }
            }
            assertNotNull(sendSide, "the sending comm learns that its send was refused");
            assertEquals(NetResult.INVALID_USAGE, sendSide.result());
            assertTrue(sendSide.getMessage().contains("100 bytes was larger than the 10-byte buffer"),
                    sendSide.getMessage());
        }
    }

    @Test
    void smallMessagesNeedOneWriteEachAndALargerReceiveGoesOutAtOnceWithTheFramesHeldBack() throws NetException {
        try (Loopback lo = new Loopback()) {
            Loopback.Wired w = new Loopback.Wired(lo, 1 << 20);
            // Receives posted ahead, one at a time as NCCL's proxy does: every send finds credit.
            int rounds = 200;
            int heldBack = 0;
            for (int i = 0; i < rounds; i++) {
                NetRequest r = lo.recv(w.pair.recv(), w.dst.asSlice(0, 64), 0, w.rm);
                heldBack = Math.max(heldBack, ((SocketRecvComm) w.pair.recv()).heldBackCts());
                w.src.set(ValueLayout.JAVA_INT, 0, i);
                NetRequest s = lo.plugin.isend(w.pair.send(), w.src.asSlice(0, 8), 0, w.sm);
                assertNotNull(s, "round " + i + ": a small send never waits for a held-back CTS");
                lo.awaitAll(s, r);
                assertEquals(i, w.dst.get(ValueLayout.JAVA_INT, 0));
            }
            // The first receive's CTS went at once (a connection starts as if messages were large);
            // the first small message, although it came as DATA, switched the receiver to holding back.
            assertEquals(SocketRecvComm.CTS_BATCH - 1, heldBack, "CTS frames held back up to a batch");
            // Then a larger receive: unlike the last, so no send could go ahead into it; its CTS goes
            // out at once, with the frames held back before it (the sender's WANT path is covered by
            // aSenderThatOnlyRetriesGetsItsHeldBackCtsWithoutTheReceiverBeingCalled).
            NetRequest r = lo.recv(w.pair.recv(), w.dst, 0, w.rm);
            assertEquals(0, ((SocketRecvComm) w.pair.recv()).heldBackCts(), "the larger receive's CTS went out at once, with the frames held back before it");
            w.src.set(ValueLayout.JAVA_INT, 4096, 4242);
            NetRequest s = null;
            int[] ignored = new int[1];
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (s == null && System.nanoTime() < deadline) {
                s = lo.plugin.isend(w.pair.send(), w.src.asSlice(0, 256 << 10), 0, w.sm);
                if (s == null) {
                    assertFalse(lo.plugin.test(r, ignored), "the receive cannot complete before its send");
                }
            }
            assertNotNull(s, "the large send got its CTS within 5 s");
            int[][] sizes = lo.awaitAll(s, r);
            assertEquals(256 << 10, sizes[1][0]);
            assertEquals(4242, w.dst.get(ValueLayout.JAVA_INT, 4096));
        }
    }

    @Test
    void largeMessagesThatCouldGoAheadNeedNoCtsEachWhileTheReceivesStayAlike() throws NetException {
        try (Loopback lo = new Loopback()) {
            int size = 256 << 10; // above the inline limit: the payload follows its frame or goes over the streams
            Loopback.Wired w = new Loopback.Wired(lo, 2L * size);
            int rounds = 64;
            for (int i = 0; i < rounds; i++) {
                MemorySegment slot = w.dst.asSlice((i % 2) * (long) size, size);
                NetRequest r = lo.recv(w.pair.recv(), slot, 0, w.rm);
                w.src.set(ValueLayout.JAVA_INT, (i % 2) * (long) size + 4 * i, i);
                NetRequest s = lo.send(w.pair.send(), w.src.asSlice((i % 2) * (long) size, size), 0, w.sm);
                int[][] sizes = lo.awaitAll(s, r);
                assertEquals(size, sizes[1][0]);
                assertEquals(i, slot.get(ValueLayout.JAVA_INT, 4L * i), "round " + i);
            }
            long writes = ((SocketRecvComm) w.pair.recv()).ctsWrites();
            // Before FLAG_AHEAD_OK every receive after a large DATA frame wrote its CTS at once (64 writes).
            assertTrue(writes <= rounds / 4, rounds + " equal receives took " + writes
                    + " CTS writes; if this fails, check that DATA frames carry FLAG_AHEAD_OK and that the receiver holds back");
        }
    }

    @Test
    void aReceiveUnlikeTheLastIsAnnouncedAtOnce() throws NetException {
        try (Loopback lo = new Loopback()) {
            int large = 256 << 10;
            Loopback.Wired w = new Loopback.Wired(lo, large);
            int rounds = 16;
            for (int i = 0; i < rounds; i++) {
                // Capacities alternate: a send may not go ahead into a receive larger than the last,
                // so each CTS must go out when its receive is posted, not when the sender asks.
                int size = i % 2 == 0 ? large : large / 2;
                NetRequest r = lo.recv(w.pair.recv(), w.dst.asSlice(0, size), 0, w.rm);
                assertEquals(0, ((SocketRecvComm) w.pair.recv()).heldBackCts(), "round " + i + ": CTS held back");
                w.src.set(ValueLayout.JAVA_INT, 0, i);
                NetRequest s = lo.send(w.pair.send(), w.src.asSlice(0, size), 0, w.sm);
                int[][] sizes = lo.awaitAll(s, r);
                assertEquals(size, sizes[1][0]);
                assertEquals(i, w.dst.get(ValueLayout.JAVA_INT, 0));
            }
            assertEquals(rounds, ((SocketRecvComm) w.pair.recv()).ctsWrites(), "one CTS write per receive");
        }
    }

    @Test
    void aSenderThatOnlyRetriesGetsItsHeldBackCtsWithoutTheReceiverBeingCalled() throws NetException {
        try (Loopback lo = new Loopback()) {
            Loopback.Wired w = new Loopback.Wired(lo, 1 << 20);
            NetRequest r1 = lo.recv(w.pair.recv(), w.dst.asSlice(0, 64), 0, w.rm);
            NetRequest s1 = lo.send(w.pair.send(), w.src.asSlice(0, 8), 0, w.sm);
            lo.awaitAll(s1, r1); // a small message: the receiver now holds its CTS frames back
            int messages = Wire.EAGER_SLOTS + 1;
            int posted = 3;
            NetRequest[] recvs = new NetRequest[posted];
            for (int k = 0; k < posted; k++) {
                recvs[k] = lo.recv(w.pair.recv(), w.dst.asSlice(64L * (k + 1), 64), 0, w.rm);
            }
            assertEquals(posted, ((SocketRecvComm) w.pair.recv()).heldBackCts(), "the receives' CTS frames are held back");
            // Only isend is retried here, as a single-threaded caller might. The sender spends its
            // EAGER credit; the next send waits for the held-back CTS frames, which the receiver's
            // liveness thread writes on the WANT byte, its caller never being called.
            long start = System.nanoTime();
            NetRequest[] sends = new NetRequest[messages];
            for (int i = 0; i < sends.length; i++) {
                w.src.set(ValueLayout.JAVA_INT, 64L * i, 7000 + i);
                sends[i] = lo.send(w.pair.send(), w.src.asSlice(64L * i, 8), 0, w.sm);
            }
            assertTrue(System.nanoTime() - start < 5_000_000_000L, "the CTS frames came within 5 s");
            lo.awaitAll(recvs);
            receiveInWaves(lo, w.pair.recv(), w.dst.asSlice(64), 64, w.rm, posted, messages - posted);
            lo.awaitAll(sends);
            for (int k = 0; k < messages; k++) {
                assertEquals(7000 + k, w.dst.get(ValueLayout.JAVA_INT, 64L * (k + 1)), "message " + k);
            }
        }
    }

    @Test
    void largeSendsStillWaitForTheirReceive() throws NetException {
        try (Loopback lo = new Loopback()) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(1 << 20);
            MemoryHandle sm = lo.register(p.send(), src);
            assertNull(lo.plugin.isend(p.send(), src.asSlice(0, Wire.EAGER_SLOT_BYTES + 1), 0, sm),
                    "above the EAGER size a send waits for its CTS");
        }
    }
}

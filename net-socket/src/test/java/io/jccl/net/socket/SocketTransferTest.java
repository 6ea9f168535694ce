package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data-path rules of the spec (section 5), for each stream layout: everything on the control
 * stream (no I/O threads), with direct socket calls and through NIO, and striped over data streams
 * with I/O threads.
 */
class SocketTransferTest {

    /** @param layout threads x streams, and " nio" for a control stream through NIO instead of direct calls */
    private static Loopback loopback(String layout) throws NetException {
        String[] tp = layout.replace(" nio", "").split("x");
        return new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0], SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1],
                SocketConfig.JCCL_SOCKET_NATIVE_IO, layout.endsWith(" nio") ? "0" : "1"));
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "0x1 nio", "2x2"})
    void sizesFromZeroToSixtyFourMiBArriveIntactAndReportTheirSize(String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            Loopback.Pair p = lo.pair();
            long max = 64L << 20;
            MemorySegment src = lo.allocate(max);
            MemorySegment dst = lo.allocate(max);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            Loopback.fillPattern(src, 3);
            long[] sizes = {0, 1, 7, 1023, 1024, 1025, 4096, 65_537, 1 << 20, (1 << 20) + 13, 4 << 20, max};
            for (long size : sizes) {
                dst.fill((byte) 0x5a);
                NetRequest r = lo.recv(p.recv(), dst, 1, rm);
                NetRequest s = lo.send(p.send(), src.asSlice(0, size), 1, sm);
                int[][] done = lo.awaitAll(s, r);
                assertEquals((int) size, done[0][0], "send size");
                assertEquals((int) size, done[1][0], "receive reports the real size");
                assertEquals(Loopback.checksum(src, size), Loopback.checksum(dst, size), "payload of " + size + " bytes");
                if (size < max) {
                    assertEquals((byte) 0x5a, dst.get(java.lang.foreign.ValueLayout.JAVA_BYTE, size),
                            "nothing written past the message");
                }
            }
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "0x1 nio", "2x2"})
    void thirtyTwoRequestsInFlightMatchInPostingOrder(String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            Loopback.Pair p = lo.pair();
            int n = 32;
            long slot = 300_000;
            MemorySegment src = lo.allocate(n * slot);
            MemorySegment dst = lo.allocate(n * slot);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            NetRequest[] recvs = new NetRequest[n];
            NetRequest[] sends = new NetRequest[n];
            for (int i = 0; i < n; i++) {
                recvs[i] = lo.recv(p.recv(), dst.asSlice(i * slot, slot), 0, rm);
            }
            for (int i = 0; i < n; i++) {
                long size = (i * 9_973L) % slot;
                src.asSlice(i * slot, slot).fill((byte) i);
                sends[i] = lo.send(p.send(), src.asSlice(i * slot, size), 0, sm);
            }
            NetRequest[] all = new NetRequest[2 * n];
            for (int i = 0; i < n; i++) {
                all[i] = recvs[n - 1 - i];
                all[n + i] = sends[i];
            }
            int[][] done = lo.awaitAll(all);
            for (int i = 0; i < n; i++) {
                long size = (i * 9_973L) % slot;
                assertEquals((int) size, done[n - 1 - i][0], "receive " + i);
                assertEquals((int) size, done[n + i][0], "send " + i);
                for (long b = 0; b < size; b += 997) {
                    assertEquals((byte) i, dst.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i * slot + b),
                            "message " + i + " landed in receive " + i);
                }
            }
            for (int i = 0; i < n; i++) {
                assertNotNull(lo.recv(p.recv(), dst.asSlice(i * slot, slot), 0, rm),
                        "every request slot is free again once its completion was reported");
            }
        }
    }

    /**
     * Misuse: a registration released while a receive into it is pending. The direct socket calls
     * take addresses as they are (a released device mirror is freed memory), so the receive fails
     * with a clear error instead of reading into it.
     */
    @org.junit.jupiter.api.Test
    void aReceiveWhoseRegistrationWasReleasedFailsInsteadOfReadingIntoIt() throws NetException {
        org.junit.jupiter.api.Assumptions.assumeTrue(NativeSocketIo.isAvailable(),
                () -> "direct socket calls unavailable: " + NativeSocketIo.unavailabilityCause());
        try (Loopback lo = loopback("0x1")) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(1 << 20);
            MemorySegment dst = lo.allocate(1 << 20);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            NetRequest r = lo.recv(p.recv(), dst, 0, rm);
            lo.plugin.deregMr(p.recv(), rm);
            NetRequest s = lo.send(p.send(), src, 0, sm);
            Loopback.Outcome[] o = lo.settle(s, r);
            NetException re = o[1].error();
            assertNotNull(re, "the receive into a released registration completed");
            assertTrue(re.getMessage().contains("registration was released"), re.getMessage());
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "0x1 nio", "2x2"})
    void aSendLargerThanItsReceiveFailsBothSidesAndTheConnectionCarriesOn(String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(1 << 20);
            MemorySegment dst = lo.allocate(1 << 20);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            dst.fill((byte) 9);
            NetRequest r = lo.recv(p.recv(), dst.asSlice(0, 100), 0, rm);
            NetRequest s = lo.send(p.send(), src.asSlice(0, 101), 0, sm);
            Loopback.Outcome[] o = lo.settle(s, r);
            NetException se = o[0].error();
            NetException re = o[1].error();
            assertNotNull(se, "the sender's request fails");
            assertNotNull(re, "the receiver's request fails");
            assertSame(NetResult.INVALID_USAGE, se.result());
            assertSame(NetResult.INVALID_USAGE, re.result());
            assertTrue(re.getMessage().contains("101 bytes to a 100-byte"), re.getMessage());
            assertEquals((byte) 9, dst.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0), "nothing was written");

            Loopback.fillPattern(src, 11);
            NetRequest r2 = lo.recv(p.recv(), dst, 0, rm);
            NetRequest s2 = lo.send(p.send(), src.asSlice(0, 200_000), 0, sm);
            assertEquals(200_000, lo.awaitAll(s2, r2)[1][0]);
            assertEquals(Loopback.checksum(src, 200_000), Loopback.checksum(dst, 200_000));
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "0x1 nio", "2x2"})
    void isendWouldBlockUntilAReceiveIsPosted(String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(4096);
            MemorySegment dst = lo.allocate(4096);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            for (int i = 0; i < 100; i++) {
                assertNull(lo.plugin.isend(p.send(), src, 0, sm), "no receive is posted yet");
            }
            NetRequest r = lo.recv(p.recv(), dst, 0, rm);
            NetRequest s = lo.send(p.send(), src, 0, sm);
            assertEquals(4096, lo.awaitAll(s, r)[1][0]);
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "0x1 nio", "2x2"})
    void tagsPickTheBufferOfAGroupedReceive(String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            Loopback.Pair p = lo.pair();
            int n = 8;
            long slot = 200_000;
            MemorySegment src = lo.allocate(n * slot);
            MemorySegment dst = lo.allocate(n * slot);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            MemorySegment[] bufs = new MemorySegment[n];
            int[] tags = new int[n];
            MemoryHandle[] mhs = new MemoryHandle[n];
            for (int i = 0; i < n; i++) {
                bufs[i] = dst.asSlice(i * slot, slot);
                tags[i] = 100 + i;
                mhs[i] = rm;
            }
            NetRequest r = lo.plugin.irecv(p.recv(), n, bufs, tags, mhs);
            NetRequest[] sends = new NetRequest[n];
            for (int k = 0; k < n; k++) {
                int tag = 100 + (n - 1 - k); // sends in the reverse order of the buffers
                src.asSlice(k * slot, slot).fill((byte) tag);
                sends[k] = lo.send(p.send(), src.asSlice(k * slot, 1000 + tag), tag, sm);
            }
            NetRequest[] all = new NetRequest[n + 1];
            all[0] = r;
            System.arraycopy(sends, 0, all, 1, n);
            int[] sizes = lo.awaitAll(all)[0];
            for (int i = 0; i < n; i++) {
                assertEquals(1000 + 100 + i, sizes[i], "buffer " + i + " got the send with tag " + (100 + i));
                assertEquals((byte) (100 + i), dst.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i * slot));
            }
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "0x1 nio", "2x2"})
    void manyCommsAtOnceKeepTheirOwnData(String layout) throws NetException {
        try (Loopback lo = loopback(layout)) {
            int comms = 8;
            long size = 3 << 20;
            Loopback.Pair[] pairs = new Loopback.Pair[comms];
            MemorySegment[] src = new MemorySegment[comms];
            MemorySegment[] dst = new MemorySegment[comms];
            NetRequest[] sends = new NetRequest[comms];
            NetRequest[] recvs = new NetRequest[comms];
            for (int c = 0; c < comms; c++) {
                pairs[c] = lo.pair();
                src[c] = lo.allocate(size);
                dst[c] = lo.allocate(size);
                Loopback.fillPattern(src[c], c);
                MemoryHandle rm = lo.register(pairs[c].recv(), dst[c]);
                recvs[c] = lo.recv(pairs[c].recv(), dst[c], c, rm);
            }
            for (int c = 0; c < comms; c++) {
                sends[c] = lo.send(pairs[c].send(), src[c], c, lo.register(pairs[c].send(), src[c]));
            }
            NetRequest[] all = new NetRequest[2 * comms];
            System.arraycopy(sends, 0, all, 0, comms);
            System.arraycopy(recvs, 0, all, comms, comms);
            lo.awaitAll(all);
            for (int c = 0; c < comms; c++) {
                assertEquals(Loopback.checksum(src[c], size), Loopback.checksum(dst[c], size), "comm " + c);
            }
        }
    }
}

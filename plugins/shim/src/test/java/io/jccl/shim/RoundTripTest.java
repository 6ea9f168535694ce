package io.jccl.shim;

import io.jccl.nativenet.NativeNetPlugin;
import io.jccl.net.socket.SocketNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The round trip in one JVM: JcclSocket exported by the shim as {@code ncclNetPlugin_vN}, loaded
 * back through the native host, so every call crosses Java &rarr; C (the host's downcall) &rarr;
 * the shim's adapter for vN &rarr; Java (upcall) &rarr; JcclSocket, and back. The shim joins this
 * JVM instead of starting one.
 *
 * <p>If this fails, check first the C driver test ({@link ShimProcessTest}): it drives the same
 * library without the native host.
 */
class RoundTripTest {

    @ParameterizedTest(name = "ncclNet v{0}")
    @ValueSource(ints = {6, 7, 8, 9, 10, 11, 12})
    void movesDataIntactAtEveryVersion(int version) throws Exception {
        NativeNetPlugin net = ShimLibrary.net(version);
        assertEquals(version, net.apiVersion().number(), "JCCL_SHIM_MAX_API_VERSION should select the symbol");
        assertEquals(SocketNetPlugin.NAME, net.name());
        net.init(NetLogger.noop());
        try {
            assertTrue(net.devices() >= 1);
            try (Connected c = new Connected(net, 8 << 20)) {
                long[] sizes = {0, 1, 8, 1000, 4097, 65_536, 1 << 20, 8 << 20};
                for (int i = 0; i < sizes.length; i++) {
                    exchange(c, sizes[i], 8 << 20, i);
                }
                groupedReceiveMatchesByTag(c);
                // NCCL registers only types the device supports: the host refuses CUDA on a HOST-only
                // device itself, before the shim (and JcclSocket's own check) could see the call.
                NetException cuda = assertThrows(NetException.class, () -> net.regMr(c.send, c.src, PointerType.CUDA));
                assertEquals(NetResult.INVALID_USAGE, cuda.result());
                assertTrue(cuda.getMessage().contains("regMr of CUDA memory not called: device 0 supports HOST"),
                        cuda.getMessage());
            }
        } finally {
            net.close();
        }
    }

    private static void exchange(Connected c, long size, long capacity, int seed) throws NetException {
        for (long i = 0; i < size; i++) {
            c.src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + seed));
        }
        c.dst.fill((byte) 0x5a);
        NetRequest recv = c.irecv(new MemorySegment[] {c.dst.asSlice(0, capacity)}, new int[] {3});
        NetRequest send = c.isend(c.src.asSlice(0, size), 3, recv);
        int[][] sizes = c.waitAll(send, recv);
        assertEquals(size, sizes[0][0], "bytes sent");
        assertEquals(size, sizes[1][0], "bytes received");
        assertEquals(-1, c.dst.asSlice(0, size).mismatch(c.src.asSlice(0, size)), size + " bytes arrive intact");
        if (size < capacity) {
            assertEquals((byte) 0x5a, c.dst.get(ValueLayout.JAVA_BYTE, size), "nothing written past the message");
        }
    }

    private static void groupedReceiveMatchesByTag(Connected c) throws NetException {
        MemorySegment a = c.dst.asSlice(0, 4096);
        MemorySegment b = c.dst.asSlice(4096, 4096);
        NetRequest recv = c.irecv(new MemorySegment[] {a, b}, new int[] {1, 2});
        c.src.asSlice(0, 300).fill((byte) 'b');
        c.src.asSlice(4096, 100).fill((byte) 'a');
        NetRequest second = c.isend(c.src.asSlice(0, 300), 2, recv);
        NetRequest first = c.isend(c.src.asSlice(4096, 100), 1, recv);
        int[] sizes = c.waitAll(second, first, recv)[2];
        assertArrayEquals(new int[] {100, 300}, new int[] {sizes[0], sizes[1]}, "one size per buffer, by tag");
        assertEquals('a', a.get(ValueLayout.JAVA_BYTE, 99));
        assertEquals('b', b.get(ValueLayout.JAVA_BYTE, 299));
    }

    @ParameterizedTest(name = "ncclNet v{0}")
    @ValueSource(ints = {6, 9, 12})
    void propertiesCrossTheAbiAsEachVersionDefinesThem(int version) throws Exception {
        SocketNetPlugin direct = new SocketNetPlugin();
        direct.init(NetLogger.noop());
        NativeNetPlugin net = ShimLibrary.net(version);
        net.init(NetLogger.noop());
        try {
            NetProperties expected = direct.getProperties(0);
            NetProperties seen = net.getProperties(0);
            assertEquals(expected.name(), seen.name());
            assertEquals(expected.pciPath(), seen.pciPath());
            assertEquals(expected.guid(), seen.guid());
            assertEquals(PointerType.HOST.mask(), seen.ptrSupport());
            assertEquals(expected.speedMbps(), seen.speedMbps());
            assertEquals(expected.maxComms(), seen.maxComms());
            assertEquals(expected.maxRecvs(), seen.maxRecvs());
            // Before v9 the struct has no maxP2pBytes: the host supplies NCCL's 1 GiB.
            assertEquals(version >= 9 ? expected.maxP2pBytes() : NetProperties.DEFAULT_MAX_P2P_BYTES, seen.maxP2pBytes());
        } finally {
            net.close();
        }
    }

    @Test
    void aMessageLargerThanItsBufferFailsBothSidesWithTheTransportsCode() throws Exception {
        NativeNetPlugin net = ShimLibrary.net(12);
        net.init(NetLogger.noop());
        try (Connected c = new Connected(net, 1 << 16)) {
            NetRequest recv = c.irecv(new MemorySegment[] {c.dst.asSlice(0, 16)}, new int[] {0});
            // The send may fail in isend itself: the shim tests a small send once there (NetBridge's
            // early test), and NCCL takes an error from isend as it takes one from test.
            NetException sendError;
            try {
                sendError = c.failureOf(c.isend(c.src.asSlice(0, 64), 0, recv));
            } catch (NetException e) {
                sendError = e;
            }
            NetException recvError = c.failureOf(recv);
            assertEquals(NetResult.INVALID_USAGE, sendError == null ? null : sendError.result(), String.valueOf(sendError));
            assertEquals(NetResult.INVALID_USAGE, recvError == null ? null : recvError.result(), String.valueOf(recvError));
        } finally {
            net.close();
        }
    }

    @Test
    void aClosedCommIsNoLongerReachable() throws Exception {
        NativeNetPlugin net = ShimLibrary.net(11);
        net.init(NetLogger.noop());
        try {
            Connected c = new Connected(net, 4096);
            net.closeSend(c.send);
            // The comm's handle left the bridge's table with it: the shim answers ncclInvalidArgument.
            NetException e = assertThrows(NetException.class,
                    () -> net.isend(c.send, c.src.asSlice(0, 1), 0, c.srcHandle));
            assertEquals(NetResult.INVALID_ARGUMENT, e.result(), e.getMessage());
            net.closeRecv(c.recv);
            net.closeListen(c.listen);
        } finally {
            net.close();
        }
    }
}

package io.jccl.net.socket;

import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * CUDA device memory on JcclSocket (ptrSupport CUDA): sends from and receives into GPU memory,
 * staged through pinned host mirrors. Needs a GPU; skipped with the cause elsewhere, where only
 * the host-only answer is checked.
 */
class SocketDeviceMemoryTest {

    private static void assumeGpu() {
        assumeTrue(Cuda.isAvailable(), () -> "no usable GPU: " + Cuda.unavailabilityCause());
    }

    @Test
    void withoutAGpuOrWhenSwitchedOffTheTransportTakesHostMemoryOnlyAndSaysSo() throws NetException {
        Map<String, String> off = Map.of(SocketConfig.JCCL_SOCKET_CUDA, "0");
        for (Map<String, String> variables : Cuda.isAvailable() ? List.of(off) : List.of(Map.<String, String>of(), off)) {
            try (Loopback lo = new Loopback(variables)) {
                assertEquals(PointerType.HOST.mask(), lo.plugin.getProperties(0).ptrSupport(), variables.toString());
                Loopback.Pair p = lo.pair();
                NetException e = assertThrows(NetException.class,
                        () -> lo.plugin.regMr(p.send(), lo.allocate(64), PointerType.CUDA));
                assertSame(NetResult.INVALID_USAGE, e.result());
                assertTrue(e.getMessage().contains(variables.isEmpty() ? "no CUDA driver" : "JCCL_SOCKET_CUDA=0"),
                        e.getMessage());
            }
        }
    }

    @ParameterizedTest(name = "threads x streams = {0}")
    @ValueSource(strings = {"0x1", "2x2"})
    void bytesGoFromGpuMemoryToGpuMemoryAtEverySize(String layout) throws NetException {
        assumeGpu();
        CudaDevice gpu = Cuda.device(0);
        String[] tp = layout.split("x");
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0],
                SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1]));
             DeviceBuffer src = gpu.allocate(32L << 20); DeviceBuffer dst = gpu.allocate(32L << 20)) {
            assertTrue(PointerType.CUDA.isIn(lo.plugin.getProperties(0).ptrSupport()), "a GPU is here: ptrSupport CUDA");
            Loopback.Pair p = lo.pair();
            MemoryHandle sm = lo.plugin.regMr(p.send(), src.segment(), PointerType.CUDA);
            MemoryHandle rm = lo.plugin.regMr(p.recv(), dst.segment(), PointerType.CUDA);
            MemorySegment pattern = lo.allocate(32L << 20);
            MemorySegment back = lo.allocate(32L << 20);
            long seed = 1;
            for (long size : new long[] {0, 8, 1000, 4096, 65536, 1 << 20, 5_000_001, 32L << 20}) {
                Loopback.fillPattern(pattern, seed++);
                Cuda.copy(src.segment(), pattern);
                gpu.fill(dst.segment(), (byte) 0);
                NetRequest r = lo.recv(p.recv(), dst.segment(), 7, rm);
                NetRequest s = lo.send(p.send(), src.segment().asSlice(0, size), 7, sm);
                int[][] sizes = lo.awaitAll(s, r);
                assertEquals(size, sizes[1][0], "received size");
                Cuda.copy(back, dst.segment());
                assertEquals(Loopback.checksum(pattern, size), Loopback.checksum(back, size), size + " bytes arrived intact");
                if (size < back.byteSize()) {
                    assertEquals(0, back.get(java.lang.foreign.ValueLayout.JAVA_BYTE, size), "nothing past the message");
                }
            }
            lo.plugin.deregMr(p.send(), sm);
            lo.plugin.deregMr(p.recv(), rm);
        }
    }

    /** Device and host sends in flight together keep their order; grouped receives mix the two. */
    @Test
    void manyDeviceAndHostSendsInFlightArriveInOrder() throws NetException {
        assumeGpu();
        CudaDevice gpu = Cuda.device(0);
        int n = 8;
        long each = 4L << 20;
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, "2",
                SocketConfig.NCCL_NSOCKS_PERTHREAD, "2"));
             DeviceBuffer src = gpu.allocate(n * each); DeviceBuffer dst = gpu.allocate(n * each)) {
            Loopback.Pair p = lo.pair();
            MemorySegment hostSrc = lo.allocate(n * each);
            MemorySegment hostDst = lo.allocate(n * each);
            MemorySegment pattern = lo.allocate(n * each);
            Loopback.fillPattern(pattern, 42);
            Cuda.copy(src.segment(), pattern);
            MemorySegment.copy(pattern, 0, hostSrc, 0, n * each);
            MemoryHandle sDev = lo.plugin.regMr(p.send(), src.segment(), PointerType.CUDA);
            MemoryHandle sHost = lo.register(p.send(), hostSrc);
            MemoryHandle rDev = lo.plugin.regMr(p.recv(), dst.segment(), PointerType.CUDA);
            MemoryHandle rHost = lo.register(p.recv(), hostDst);
            List<NetRequest> all = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                boolean devSide = i % 2 == 0;
                // receive i: even ones into the GPU, odd ones into host memory; sends the other way round
                MemorySegment into = (devSide ? dst.segment() : hostDst).asSlice(i * each, each);
                all.add(lo.recv(p.recv(), into, 0, devSide ? rDev : rHost));
            }
            for (int i = 0; i < n; i++) {
                boolean fromDevice = i % 2 == 1;
                MemorySegment from = (fromDevice ? src.segment() : hostSrc).asSlice(i * each, each);
                all.add(lo.send(p.send(), from, 0, fromDevice ? sDev : sHost));
            }
            lo.awaitAll(all.toArray(NetRequest[]::new));
            MemorySegment back = lo.allocate(n * each);
            Cuda.copy(back, dst.segment());
            for (int i = 0; i < n; i++) {
                MemorySegment got = (i % 2 == 0 ? back : hostDst).asSlice(i * each, each);
                assertArrayEquals(pattern.asSlice(i * each, each).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        got.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), "message " + i);
            }
        }
    }

    @Test
    void hostMemoryRegisteredAsCudaIsRefusedClearly() throws NetException {
        assumeGpu();
        try (Loopback lo = new Loopback()) {
            Loopback.Pair p = lo.pair();
            NetException e = assertThrows(NetException.class,
                    () -> lo.plugin.regMr(p.send(), lo.allocate(4096), PointerType.CUDA));
            assertSame(NetResult.INVALID_ARGUMENT, e.result());
            assertTrue(e.getMessage().contains("not a CUDA device pointer"), e.getMessage());
            assertFalse(e.getMessage().isBlank());
        }
    }
}

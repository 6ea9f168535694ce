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
import org.junit.jupiter.params.provider.CsvSource;
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

    /**
     * NCCL's pattern with GPUDirect: a connection carries its LL protocol's small messages from host
     * buffers first (the receiver then holds its clear-to-send frames back), then LL128 and Simple
     * steps from and into GPU buffers, the sender trying each step before the receiver has posted
     * it, up to 8 steps in flight. Every step must arrive intact and in bounded time; if this hangs,
     * check how a device send that cannot go ahead of its CTS gets one from a receiver that holds
     * them back.
     */
    @ParameterizedTest(name = "threads x streams = {0}, steps sent from {1} memory")
    @CsvSource({"0x1,device", "1x1,device", "2x2,device", "0x1,host", "1x1,host", "2x2,host"})
    void smallHostStepsThenDeviceStepsPostedAsNcclPostsThem(String layout, String sendFrom) throws NetException {
        assumeGpu();
        CudaDevice gpu = Cuda.device(0);
        String[] tp = layout.split("x");
        int steps = 8;
        long stepBytes = 1L << 20;
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0],
                SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1]));
             DeviceBuffer src = gpu.allocate(steps * stepBytes); DeviceBuffer dst = gpu.allocate(steps * stepBytes)) {
            Loopback.Pair p = lo.pair();
            MemorySegment hostSrc = lo.allocate(steps * 8192L);
            MemorySegment hostDst = lo.allocate(steps * 8192L);
            MemoryHandle sHost = lo.register(p.send(), hostSrc);
            MemoryHandle rHost = lo.register(p.recv(), hostDst);
            MemoryHandle sDev = lo.plugin.regMr(p.send(), src.segment(), PointerType.CUDA);
            MemoryHandle rDev = lo.plugin.regMr(p.recv(), dst.segment(), PointerType.CUDA);
            Loopback.fillPattern(hostSrc, 3);
            for (int i = 0; i < 400; i++) {
                long size = 8L << (i % 11);
                int slot = i % steps;
                NetRequest r = lo.recv(p.recv(), hostDst.asSlice(slot * 8192L, 8192), 0, rHost);
                NetRequest snd = lo.send(p.send(), hostSrc.asSlice(slot * 8192L, size), 0, sHost);
                assertEquals(size, lo.awaitAll(snd, r)[1][0], "small host step " + i);
            }
            MemorySegment pattern = lo.allocate(steps * stepBytes);
            Loopback.fillPattern(pattern, 11);
            Cuda.copy(src.segment(), pattern);
            // NCCL's LL buffers stay in host memory on the sending side; with GPUDirect every
            // receive buffer is in the GPU
            boolean fromDevice = sendFrom.equals("device");
            MemorySegment from = fromDevice ? src.segment() : pattern;
            MemoryHandle sFrom = fromDevice ? sDev : lo.register(p.send(), pattern);
            NetRequest[] sends = new NetRequest[steps];
            NetRequest[] recvs = new NetRequest[steps];
            long[] sizes = new long[steps];
            int rounds = 64;
            long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
            int posted = 0;
            int sent = 0;
            int tried = 0;
            int done = 0;
            int[] got = new int[8];
            while (done < rounds) {
                if (System.currentTimeMillis() > deadline) {
                    throw new AssertionError("device steps stalled: " + sent + " sent, " + tried + " tried, " + posted + " posted, " + done
                            + " done of " + rounds);
                }
                // the sender tries the next step first, as NCCL's send proxy does once the GPU has written it
                if (sent < rounds && sent - done < steps) {
                    tried = sent + 1;
                    int slot = sent % steps;
                    long size = 1024L << (sent % 11);
                    NetRequest s = lo.plugin.isend(p.send(), from.asSlice(slot * stepBytes, size), 0, sFrom);
                    if (s != null) {
                        sends[slot] = s;
                        sizes[slot] = size;
                        sent++;
                    }
                }
                // the receiver posts a step only once the sender has tried it (its data was ready first)
                if (posted < tried && posted - done < steps) {
                    int slot = posted % steps;
                    recvs[slot] = lo.recv(p.recv(), dst.segment().asSlice(slot * stepBytes, stepBytes), 0, rDev);
                    posted++;
                }
                if (done < posted) {
                    int slot = done % steps;
                    boolean sendDone = sends[slot] == null || lo.plugin.test(sends[slot], got);
                    if (sendDone) {
                        sends[slot] = null;
                    }
                    if (recvs[slot] != null && lo.plugin.test(recvs[slot], got)) {
                        assertEquals(sizes[slot], got[0], "device step " + done + " size");
                        recvs[slot] = null;
                    }
                    if (sends[slot] == null && recvs[slot] == null) {
                        done++;
                    }
                }
            }
            MemorySegment back = lo.allocate(steps * stepBytes);
            Cuda.copy(back, dst.segment());
            for (int slot = 0; slot < steps; slot++) {
                long size = sizes[slot];
                assertEquals(Loopback.checksum(pattern.asSlice(slot * stepBytes, size), size),
                        Loopback.checksum(back.asSlice(slot * stepBytes, size), size), "last step in slot " + slot);
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

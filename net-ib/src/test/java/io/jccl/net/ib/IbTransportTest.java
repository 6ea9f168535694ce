package io.jccl.net.ib;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.discovery.NetPluginDiscovery;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.jccl.net.ib.IbTestSupport.await;
import static io.jccl.net.ib.IbTestSupport.pattern;
import static io.jccl.net.ib.IbTestSupport.reg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * JcclIB on a real verbs device (SoftRoCE in CI): devices, every message size, grouped receives,
 * several queue pairs, 32 requests in flight, the oversize rule, flush and registration. Skips with
 * the reason where no device is usable.
 */
@RequiresRdma
class IbTransportTest {
    private static IbNetPlugin plugin;
    private static Arena arena;

    @BeforeAll
    static void setUp() throws NetException {
        if (!IbNetPlugin.isAvailable()) {
            return;
        }
        plugin = IbTestSupport.plugin();
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

    @Test
    void devicesAreTheActivePortsWithTheirProperties() throws Exception {
        assertTrue(plugin.devices() >= 1);
        NetProperties p = plugin.getProperties(0);
        IbDevice d = plugin.devicesForTest().get(0);
        assertEquals(d.uniqueName(), p.name());
        assertEquals(PointerType.HOST.mask(), p.ptrSupport());
        assertEquals(8, p.maxRecvs());
        assertEquals(d.port(), p.port());
        assertEquals(d.speedMbps(), p.speedMbps());
        assertTrue(p.speedMbps() >= 2_500, "speed from active_speed x active_width");
        assertTrue(p.maxComms() > 0);
        Path sys = Path.of("/sys/class/infiniband", d.hca().name);
        String guid = Files.readString(sys.resolve("sys_image_guid")).trim().replace(":", "");
        assertEquals(Long.parseUnsignedLong(guid, 16), p.guid(), "guid = sys_image_guid");
        if (Files.exists(sys.resolve("device"))) {
            assertNotNull(p.pciPath());
        } else {
            assertNull(p.pciPath(), "a virtual device (rxe) has no PCI path");
        }
        assertThrows(NetException.class, () -> plugin.getProperties(plugin.devices()));
    }

    @Test
    void serviceLoaderFindsJcclIb() {
        NetPluginDiscovery found = NetPluginDiscovery.load();
        assertTrue(found.netPlugins().stream().anyMatch(p -> p.name().equals("JcclIB")), found.netPlugins()::toString);
    }

    @Test
    void everySizeArrivesIntactWithItsSize() throws Exception {
        // 20 MiB is larger than rxe's max_msg_sz (8 MiB): the sender splits it into several writes
        long[] sizes = {0, 1, 7, 4096, 65_536, (1 << 20) + 3, 20L << 20};
        try (IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin)) {
            for (long size : sizes) {
                MemorySegment src = pattern(arena, size, (int) size);
                MemorySegment dst = arena.allocate(size + 64, 64);
                MemoryHandle smh = reg(plugin, p.send(), src);
                MemoryHandle rmh = reg(plugin, p.recv(), dst);
                NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {1}, new MemoryHandle[] {rmh});
                NetRequest s = IbTestSupport.send(p, src, 1, smh);
                assertEquals(size, await(plugin, s)[0], "send size");
                assertEquals(size, await(plugin, r)[0], "the receive reports the message size, not its capacity");
                assertEquals(-1, src.mismatch(dst.asSlice(0, size)), "data of " + size + " bytes");
                plugin.deregMr(p.send(), smh);
                plugin.deregMr(p.recv(), rmh);
            }
        }
    }

    @Test
    void groupedReceivePutsEachSendInTheBufferOfItsTag() throws Exception {
        try (IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin)) {
            int n = 8;
            MemorySegment[] dst = new MemorySegment[n];
            MemoryHandle[] rmh = new MemoryHandle[n];
            int[] tags = new int[n];
            for (int i = 0; i < n; i++) {
                dst[i] = arena.allocate(10_000, 64);
                rmh[i] = reg(plugin, p.recv(), dst[i]);
                tags[i] = 100 + i;
            }
            NetRequest r = IbTestSupport.recv(p, dst, tags, rmh);
            List<NetRequest> sends = new ArrayList<>();
            List<MemorySegment> srcs = new ArrayList<>();
            for (int k = n - 1; k >= 0; k--) { // reverse order: tags, not order, pick the buffer
                MemorySegment src = pattern(arena, 1000 + 17 * k, k);
                srcs.add(0, src);
                sends.add(IbTestSupport.send(p, src, 100 + k, reg(plugin, p.send(), src)));
            }
            for (NetRequest s : sends) {
                await(plugin, s);
            }
            int[] got = await(plugin, r);
            for (int i = 0; i < n; i++) {
                assertEquals(1000 + 17 * i, got[i], "size of buffer " + i);
                assertEquals(-1, srcs.get(i).mismatch(dst[i].asSlice(0, got[i])), "data of buffer " + i);
            }
            // a send whose tag matches no free buffer of the current grouped receive
            NetRequest r2 = IbTestSupport.recv(p, new MemorySegment[] {dst[0], dst[1]}, new int[] {1, 2},
                    new MemoryHandle[] {rmh[0], rmh[1]});
            MemorySegment src = pattern(arena, 10, 0);
            MemoryHandle smh = reg(plugin, p.send(), src);
            NetException e = assertThrows(NetException.class, () -> {
                for (int i = 0; i < 1_000_000; i++) {
                    if (plugin.isend(p.send(), src, 3, smh) != null) {
                        return;
                    }
                }
            });
            assertEquals(NetResult.INVALID_USAGE, e.result(), e.getMessage());
            assertNotNull(r2);
        }
    }

    @Test
    void thirtyTwoRequestsInFlightCompleteInOrder() throws Exception {
        try (IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin)) {
            int k = NetPlugin.MAX_REQUESTS;
            MemorySegment src = pattern(arena, 128L * k, 3);
            MemorySegment dst = arena.allocate(128L * k, 64);
            MemoryHandle smh = reg(plugin, p.send(), src);
            MemoryHandle rmh = reg(plugin, p.recv(), dst);
            NetRequest[] recvs = new NetRequest[k];
            for (int i = 0; i < k; i++) {
                recvs[i] = plugin.irecv(p.recv(), 1, new MemorySegment[] {dst.asSlice(128L * i, 128)}, new int[] {0},
                        new MemoryHandle[] {rmh});
                assertNotNull(recvs[i], "irecv " + i + " of " + k + " must be accepted");
            }
            assertNull(plugin.irecv(p.recv(), 1, new MemorySegment[] {dst.asSlice(0, 64)}, new int[] {0},
                    new MemoryHandle[] {rmh}), "the 33rd receive would block");
            NetRequest[] sends = new NetRequest[k];
            for (int i = 0; i < k; i++) {
                sends[i] = IbTestSupport.send(p, src.asSlice(128L * i, 40 + i), 0, smh);
            }
            for (int i = 0; i < k; i++) {
                assertEquals(40 + i, await(plugin, sends[i])[0]);
                assertEquals(40 + i, await(plugin, recvs[i])[0]);
            }
            for (int i = 0; i < k; i++) {
                assertEquals(-1, src.asSlice(128L * i, 40 + i).mismatch(dst.asSlice(128L * i, 40 + i)), "message " + i);
            }
        }
    }

    @Test
    void messagesSplitOverSeveralQueuePairs() throws Exception {
        for (String split : new String[] {"1", "0"}) {
            IbNetPlugin multi = IbTestSupport.plugin(IbConfig.NCCL_IB_QPS_PER_CONNECTION, "4",
                    IbConfig.NCCL_IB_SPLIT_DATA_ON_QPS, split);
            try (IbTestSupport.Pair p = IbTestSupport.connect(multi, multi)) {
                assertEquals(4, ((IbComm) p.send()).qps.length);
                assertEquals(4, ((IbComm) p.recv()).qps.length);
                assertEquals(split.equals("1") ? 4 : 1, ((IbComm) p.recv()).qpsPerRequest);
                for (long size : new long[] {(1 << 20) + 5, 300, 0, 9 << 20}) {
                    for (int round = 0; round < 3; round++) { // rotates over the queue pairs
                        MemorySegment src = pattern(arena, size, round);
                        MemorySegment dst = arena.allocate(size + 8, 64);
                        MemoryHandle smh = reg(multi, p.send(), src);
                        MemoryHandle rmh = reg(multi, p.recv(), dst);
                        NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0},
                                new MemoryHandle[] {rmh});
                        NetRequest s = IbTestSupport.send(p, src, 0, smh);
                        await(multi, s);
                        assertEquals(size, await(multi, r)[0]);
                        assertEquals(-1, src.mismatch(dst.asSlice(0, size)), "split=" + split + " size " + size);
                        multi.deregMr(p.send(), smh);
                        multi.deregMr(p.recv(), rmh);
                    }
                }
            } finally {
                multi.close();
            }
        }
    }

    @Test
    void aSendLargerThanItsReceiveFailsOnBothSidesAndTheCommGoesOn() throws Exception {
        try (IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin)) {
            MemorySegment src = pattern(arena, 200, 1);
            MemorySegment dst = arena.allocate(200, 64);
            MemoryHandle smh = reg(plugin, p.send(), src);
            MemoryHandle rmh = reg(plugin, p.recv(), dst);
            NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst.asSlice(0, 100)}, new int[] {0},
                    new MemoryHandle[] {rmh});
            NetRequest s = IbTestSupport.send(p, src, 0, smh);
            NetException se = assertThrows(NetException.class, () -> await(plugin, s));
            assertEquals(NetResult.INVALID_USAGE, se.result(), se.getMessage());
            NetException re = assertThrows(NetException.class, () -> await(plugin, r));
            assertEquals(NetResult.INVALID_USAGE, re.result(), re.getMessage());
            assertEquals(0, dst.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0), "nothing was written");

            // grouped: one oversized member fails the whole receive, on both sides
            NetRequest g = IbTestSupport.recv(p, new MemorySegment[] {dst.asSlice(0, 50), dst.asSlice(64, 100)},
                    new int[] {0, 0}, new MemoryHandle[] {rmh, rmh});
            NetRequest s1 = IbTestSupport.send(p, src.asSlice(0, 20), 0, smh);
            NetRequest s2 = IbTestSupport.send(p, src.asSlice(0, 150), 0, smh);
            await(plugin, s1);
            assertEquals(NetResult.INVALID_USAGE, assertThrows(NetException.class, () -> await(plugin, s2)).result());
            assertEquals(NetResult.INVALID_USAGE, assertThrows(NetException.class, () -> await(plugin, g)).result());

            // the comm still works
            NetRequest r2 = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh});
            NetRequest s3 = IbTestSupport.send(p, src.asSlice(0, 150), 0, smh);
            assertEquals(150, await(plugin, s3)[0]);
            assertEquals(150, await(plugin, r2)[0]);
            assertEquals(-1, src.asSlice(0, 150).mismatch(dst.asSlice(0, 150)));
        }
    }

    @Test
    void flushIsNothingForHostMemory() throws Exception {
        try (IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin)) {
            MemorySegment dst = arena.allocate(4096, 64);
            MemoryHandle rmh = reg(plugin, p.recv(), dst);
            assertNull(plugin.iflush(p.recv(), 1, new MemorySegment[] {dst}, new MemoryHandle[] {rmh}));
        }
    }

    @Test
    void forcedFlushIsAnRdmaReadOnTheLoopbackQueuePair() throws Exception {
        IbNetPlugin flushing = IbTestSupport.plugin(IbConfig.JCCL_IB_FLUSH_HOST_MEMORY, "1");
        try (IbTestSupport.Pair p = IbTestSupport.connect(flushing, flushing)) {
            MemorySegment src = pattern(arena, 5000, 9);
            MemorySegment dst = arena.allocate(5000, 64);
            MemoryHandle smh = reg(flushing, p.send(), src);
            MemoryHandle rmh = reg(flushing, p.recv(), dst);
            for (int i = 0; i < 40; i++) { // more than the 32 flush requests: they are recycled
                NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh});
                await(flushing, IbTestSupport.send(p, src, 0, smh));
                int got = await(flushing, r)[0];
                NetRequest f = flushing.iflush(p.recv(), 1, new MemorySegment[] {dst.asSlice(0, got)},
                        new MemoryHandle[] {rmh});
                assertNotNull(f, "a forced flush posts a read");
                await(flushing, f);
            }
            assertNull(flushing.iflush(p.recv(), 1, new MemorySegment[] {dst.asSlice(0, 0)}, new MemoryHandle[] {rmh}),
                    "nothing received: nothing to flush");
        } finally {
            flushing.close();
        }
    }

    @Test
    void registrationsAreCachedAndCheckedByDataCalls() throws Exception {
        try (IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin)) {
            Hca hca = ((IbComm) p.send()).hca;
            int before = hca.registrations.size();
            MemorySegment buf = arena.allocate(1 << 20, 4096);
            MemoryHandle whole = reg(plugin, p.send(), buf);
            MemoryHandle part = reg(plugin, p.recv(), buf.asSlice(8192, 100));
            assertEquals(before + 1, hca.registrations.size(), "a sub-range reuses the registration");
            assertEquals(((IbMemoryHandle) whole).rkey, ((IbMemoryHandle) part).rkey);

            NetException outside = assertThrows(NetException.class,
                    () -> plugin.isend(p.send(), buf.asSlice(9000, 10), 0, part));
            assertEquals(NetResult.INVALID_ARGUMENT, outside.result());

            plugin.deregMr(p.recv(), part);
            assertEquals(before + 1, hca.registrations.size());
            plugin.deregMr(p.send(), whole);
            assertEquals(before, hca.registrations.size());
            assertEquals(NetResult.INVALID_ARGUMENT,
                    assertThrows(NetException.class, () -> plugin.deregMr(p.send(), whole)).result());

            assertEquals(NetResult.INVALID_USAGE, assertThrows(NetException.class,
                    () -> plugin.regMr(p.send(), buf, PointerType.CUDA)).result());
            assertEquals(NetResult.INVALID_ARGUMENT, assertThrows(NetException.class,
                    () -> plugin.regMr(p.send(), MemorySegment.ofArray(new byte[64]), PointerType.HOST)).result());
        }
    }

    @Test
    void misuseGetsClearErrors() throws Exception {
        try (IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin)) {
            MemorySegment dst = arena.allocate(4096, 64);
            MemoryHandle rmh = reg(plugin, p.recv(), dst);
            MemorySegment[] nine = new MemorySegment[9];
            MemoryHandle[] nineMh = new MemoryHandle[9];
            java.util.Arrays.fill(nine, dst);
            java.util.Arrays.fill(nineMh, rmh);
            assertEquals(NetResult.INTERNAL_ERROR, assertThrows(NetException.class,
                    () -> plugin.irecv(p.recv(), 9, nine, new int[9], nineMh)).result());

            NetRequest r = IbTestSupport.recv(p, new MemorySegment[] {dst}, new int[] {0}, new MemoryHandle[] {rmh});
            MemorySegment src = pattern(arena, 10, 1);
            NetRequest s = IbTestSupport.send(p, src, 0, reg(plugin, p.send(), src));
            await(plugin, s);
            await(plugin, r);
            assertEquals(NetResult.INTERNAL_ERROR, assertThrows(NetException.class, () -> plugin.test(r, null)).result(),
                    "a completed request belongs to the transport again");
            assertFalse(plugin.toString().isEmpty());
        }
    }
}

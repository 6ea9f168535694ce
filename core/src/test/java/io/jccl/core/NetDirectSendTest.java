package io.jccl.core;

import io.jccl.core.check.CollectiveKind;
import io.jccl.spi.DataType;
import io.jccl.spi.ForwardingNetPlugin;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.SendComm;
import io.jccl.spi.discovery.NetPluginDiscovery;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rings through the network send final bytes straight from the caller's buffers
 * ({@code JCCL_NET_DIRECT=1}, the default) or copy them into slots ({@code 0}): every ring
 * collective comes out the same either way, out of place and in place, and the direct sends do
 * happen where they may.
 */
class NetDirectSendTest {
    private static LocalRanks ranks(boolean direct) {
        return ranks(3, "Ring", direct);
    }

    private static LocalRanks ranks(int n, String algorithm, boolean direct) {
        return new LocalRanks(n, DataPath.NETWORK.config().channels(2).bufferSize(8 << 10).lowLatencyBytes(0)
                .algorithms(algorithm).netDirect(direct).timeout(Duration.ofSeconds(30)).build());
    }

    /**
     * JcclSocket that reads a send's buffer only some time after {@code isend}, as an RDMA NIC
     * reads registered memory when it gets to the work request: a send from the user's buffer is
     * safe only if the operation waits for its completion before handing the buffer back.
     */
    static final class LateReadingSocket extends ForwardingNetPlugin {
        static final long DELAY_NANOS = 2_000_000;

        private static final class Late implements NetRequest {
            final SendComm comm;
            final MemorySegment data;
            final int tag;
            final MemoryHandle handle;
            final long readAt = System.nanoTime() + DELAY_NANOS;
            NetRequest started;

            Late(SendComm comm, MemorySegment data, int tag, MemoryHandle handle) {
                this.comm = comm;
                this.data = data;
                this.tag = tag;
                this.handle = handle;
            }
        }

        LateReadingSocket(NetPlugin delegate) {
            super(delegate);
        }

        @Override
        public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) {
            return new Late(comm, data, tag, mhandle);
        }

        @Override
        public boolean test(NetRequest request, int[] sizes) throws NetException {
            if (!(request instanceof Late late)) {
                return delegate.test(request, sizes);
            }
            if (late.started == null) {
                if (System.nanoTime() - late.readAt < 0) {
                    return false;
                }
                late.started = delegate.isend(late.comm, late.data, late.tag, late.handle);
                if (late.started == null) {
                    return false;
                }
            }
            return delegate.test(late.started, sizes);
        }
    }

    /**
     * Each rank overwrites its buffers as soon as its all-reduce returns. With a transport that reads
     * them late, the others still get this rank's bytes only because the operation waited for its
     * sends from those buffers to complete.
     */
    @ParameterizedTest(name = "{0} ranks, {1}")
    @CsvSource({"3, Ring", "4, HalvingDoubling"})
    void anOperationReturnsOnlyOnceItsSendsFromTheCallersBuffersAreComplete(int n, String algorithm) {
        CommConfig config = DataPath.NETWORK.config().channels(1).bufferSize(64 << 10).lowLatencyBytes(0)
                .algorithms(algorithm).timeout(Duration.ofSeconds(30))
                .discovery(() -> NetPluginDiscovery.builder()
                        .add(new LateReadingSocket(NetPluginDiscovery.load().findNet("JcclSocket").orElseThrow())).build())
                .build();
        try (LocalRanks ranks = new LocalRanks(n, config)) {
            int count = 12_000;
            List<Long> wrong = ranks.run(rank -> {
                Communicator comm = ranks.comms[rank];
                long bad = 0;
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment in = arena.allocate(4L * count, 64);
                    MemorySegment out = arena.allocate(4L * count, 64);
                    for (int call = 0; call < 5; call++) {
                        for (int i = 0; i < count; i++) {
                            in.setAtIndex(ValueLayout.JAVA_INT, i, i + rank + call);
                        }
                        comm.allReduce(in, out, count, DataType.INT32, ReduceOp.SUM);
                        for (int i = 0; i < count; i++) {
                            bad += out.getAtIndex(ValueLayout.JAVA_INT, i) == n * (i + call) + n * (n - 1) / 2 ? 0 : 1;
                        }
                        in.fill((byte) 0x5a);
                        out.fill((byte) 0x5a);
                    }
                    assertTrue(comm.directSends() > 0, "rank " + rank + " sent from its buffers");
                }
                return bad;
            });
            assertEquals(List.of(), wrong.stream().filter(w -> w != 0).toList(), "wrong elements per rank: " + wrong);
        }
    }

    /** Heap buffers (two arrays, same offsets) go through slots: their addresses are array offsets. */
    @ParameterizedTest(name = "{0} ranks, {1}")
    @CsvSource({"3, Ring", "4, HalvingDoubling"})
    void heapBuffersAreRightAndGoThroughSlots(int n, String algorithm) {
        try (LocalRanks ranks = ranks(n, algorithm, true)) {
            int count = 20_000;
            List<Long> sent = ranks.run(rank -> {
                Communicator comm = ranks.comms[rank];
                long before = comm.directSends() + comm.directReceives();
                for (int call = 0; call < 3; call++) {
                    int[] in = new int[count];
                    int[] out = new int[count];
                    for (int i = 0; i < count; i++) {
                        in[i] = i + rank + call;
                    }
                    comm.allReduce(MemorySegment.ofArray(in), MemorySegment.ofArray(out), count, DataType.INT32, ReduceOp.SUM);
                    for (int i = 0; i < count; i++) {
                        assertEquals(n * (i + call) + n * (n - 1) / 2, out[i], "rank " + rank + " call " + call + " element " + i);
                    }
                }
                return comm.directSends() + comm.directReceives() - before;
            });
            assertEquals(List.of(0L, 0L, 0L, 0L).subList(0, n), sent, "no direct messages from or into heap buffers");
        }
    }

    @ParameterizedTest(name = "direct sends {0}")
    @ValueSource(booleans = {true, false})
    void everyRingCollectiveIsRightWithDirectSendsOnOrOff(boolean direct) {
        try (LocalRanks ranks = ranks(direct)) {
            for (CollectiveKind c : CollectiveKind.values()) {
                CollectiveMatrixTest.check(c, ranks, DataType.FLOAT32, c.reduces() ? ReduceOp.SUM : null);
                CollectiveMatrixTest.check(c, ranks, DataType.INT8, c.reduces() ? ReduceOp.MAX : null);
            }
        }
    }

    /**
     * Halving-doubling's all-gather writes (straight from the network) the ranges its reduce-scatter
     * sent from the output: in place those sends read the very bytes.
     */
    @ParameterizedTest(name = "direct sends {0}")
    @ValueSource(booleans = {true, false})
    void halvingDoublingIsRightWithDirectSendsOnOrOff(boolean direct) {
        try (LocalRanks ranks = ranks(4, "HalvingDoubling", direct)) {
            long[] sizes = {1, 257, 20_011, 65_536};
            CollectiveMatrixTest.checkAllReduce(ranks, DataType.FLOAT32, ReduceOp.SUM, sizes);
            CollectiveMatrixTest.checkAllReduce(ranks, DataType.INT8, ReduceOp.MAX, sizes);
            CollectiveMatrixTest.checkAllReduce(ranks, DataType.FLOAT64, ReduceOp.AVG, sizes);
        }
    }

    @ParameterizedTest(name = "{0} ranks, {1}, direct sends {2}")
    @CsvSource({"3, Ring, true", "3, Ring, false", "4, HalvingDoubling, true", "4, HalvingDoubling, false"})
    void anOutOfPlaceAllReduceSendsFromTheCallersBuffersOnlyWhenAllowed(int n, String algorithm, boolean direct) {
        try (LocalRanks ranks = ranks(n, algorithm, direct)) {
            int count = 50_000;
            List<Long> sent = ranks.run(rank -> {
                Communicator comm = ranks.comms[rank];
                // Shared: the proxy thread may run the steps too.
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment in = arena.allocate(4L * count, 64);
                    MemorySegment out = arena.allocate(4L * count, 64);
                    for (int i = 0; i < count; i++) {
                        in.setAtIndex(ValueLayout.JAVA_INT, i, i + rank);
                    }
                    long before = comm.directSends();
                    long receivedBefore = comm.directReceives();
                    comm.allReduce(in, out, count, DataType.INT32, ReduceOp.SUM);
                    // Both receive their all-gather straight into the output.
                    assertEquals(direct, comm.directReceives() > receivedBefore, "rank " + rank + ": received into the output");
                    for (int i = 0; i < count; i++) {
                        assertEquals(n * i + n * (n - 1) / 2, out.getAtIndex(ValueLayout.JAVA_INT, i), "rank " + rank + " element " + i);
                    }
                    return comm.directSends() - before;
                }
            });
            for (int r = 0; r < sent.size(); r++) {
                if (direct) {
                    // 2 channels, 8 KiB slots: many slices a step; most steps send bytes final in the input or output.
                    assertTrue(sent.get(r) > 0, "rank " + r + " sent nothing from its buffers");
                } else {
                    assertEquals(0L, sent.get(r), "rank " + r + " with JCCL_NET_DIRECT=0");
                }
            }
        }
    }
}

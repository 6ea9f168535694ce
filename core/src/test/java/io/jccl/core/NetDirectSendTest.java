package io.jccl.core;

import io.jccl.core.check.CollectiveKind;
import io.jccl.spi.DataType;
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
     * Halving-doubling's all-gather writes the ranges its reduce-scatter sent from the output: in
     * place those sends read the very bytes, so the results show whether it waited for them.
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
                    comm.allReduce(in, out, count, DataType.INT32, ReduceOp.SUM);
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

package io.jccl.core;

import io.jccl.core.check.CollectiveKind;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.params.ParameterizedTest;
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
        return new LocalRanks(3, DataPath.NETWORK.config().channels(2).bufferSize(8 << 10).lowLatencyBytes(0)
                .algorithms("Ring").netDirect(direct).timeout(Duration.ofSeconds(30)).build());
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

    @ParameterizedTest(name = "direct sends {0}")
    @ValueSource(booleans = {true, false})
    void anOutOfPlaceAllReduceSendsFromTheCallersBuffersOnlyWhenAllowed(boolean direct) {
        try (LocalRanks ranks = ranks(direct)) {
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
                    long before = comm.ringDirectSends();
                    comm.allReduce(in, out, count, DataType.INT32, ReduceOp.SUM);
                    for (int i = 0; i < count; i++) {
                        assertEquals(3 * i + 3, out.getAtIndex(ValueLayout.JAVA_INT, i), "rank " + rank + " element " + i);
                    }
                    return comm.ringDirectSends() - before;
                }
            });
            for (int r = 0; r < sent.size(); r++) {
                if (direct) {
                    // 2 channels, 8 KiB slots: many slices a step, every step's send final in the input or output.
                    assertTrue(sent.get(r) > 0, "rank " + r + " sent nothing from its buffers");
                } else {
                    assertEquals(0L, sent.get(r), "rank " + r + " with JCCL_NET_DIRECT=0");
                }
            }
        }
    }
}

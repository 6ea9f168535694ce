package io.jccl.core;

import io.jccl.core.check.CollectiveKind;
import io.jccl.core.check.VerifiableData;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Halving-doubling all-reduce (NCCL_ALGO=HalvingDoubling) over the network path on 4 and 8
 * ranks: every type and operation, out-of-place and in-place, against the exact results of
 * {@link VerifiableData}. Small slots (1 KiB), so that each round's range goes as many messages;
 * sizes with fewer elements than ranks (empty blocks, empty messages), with blocks cut short at the
 * end, and of whole blocks. LL off, so that even one element goes through the rounds.
 */
class HalvingDoublingCollectiveTest {
    static final int[] RANK_COUNTS = {4, 8};
    static final long[] SIZES = {1, 5, 257, 20_011, 65_536};
    static final DataType[] TYPES = {DataType.INT8, DataType.INT32, DataType.UINT64, DataType.FLOAT16,
            DataType.BFLOAT16, DataType.FLOAT32, DataType.FLOAT64};
    static final LocalRanks[] RANKS = new LocalRanks[RANK_COUNTS.length];
    /** Not a power of two: the tuner cannot give it halving-doubling and falls back to rings. */
    static LocalRanks threeRanks;
    /**
     * Ranks in blocks per host, shared memory inside a host and the network between: 2 hosts of
     * 2, 4 hosts of 2, 2 hosts of 4. Halving-doubling pairs inside a host first there.
     */
    static final int[][] HOST_LAYOUTS = {{2, 2}, {4, 2}, {2, 4}};
    static final LocalRanks[] ON_HOSTS = new LocalRanks[HOST_LAYOUTS.length];
    static final DataType[] HOST_TYPES = {DataType.INT32, DataType.BFLOAT16, DataType.FLOAT64};

    @BeforeAll
    static void startCommunicators() {
        CommConfig halvingDoubling = DataPath.NETWORK.config().channels(2).bufferSize(8 << 10).lowLatencyBytes(0)
                .algorithms("HalvingDoubling").timeout(Duration.ofSeconds(30)).build();
        for (int i = 0; i < RANK_COUNTS.length; i++) {
            RANKS[i] = new LocalRanks(RANK_COUNTS[i], halvingDoubling);
        }
        threeRanks = new LocalRanks(3, halvingDoubling);
        for (int i = 0; i < HOST_LAYOUTS.length; i++) {
            int perHost = HOST_LAYOUTS[i][1];
            int n = HOST_LAYOUTS[i][0] * perHost;
            String layout = "hd-" + HOST_LAYOUTS[i][0] + "x" + perHost + "-host-";
            ON_HOSTS[i] = new LocalRanks(n, n, UniqueId.create(Duration.ofSeconds(30)), rank -> DataPath.SHARED_MEMORY
                    .config().channels(2).bufferSize(8 << 10).lowLatencyBytes(0).algorithms("HalvingDoubling")
                    .hostId(layout + rank / perHost).timeout(Duration.ofSeconds(30)).build());
        }
    }

    @AfterAll
    static void closeCommunicators() {
        for (LocalRanks r : RANKS) {
            if (r != null) {
                r.close();
            }
        }
        if (threeRanks != null) {
            threeRanks.close();
        }
        for (LocalRanks r : ON_HOSTS) {
            if (r != null) {
                r.close();
            }
        }
    }

    @TestFactory
    List<DynamicNode> allReduceOnEveryTypeOperationAndRankCount() {
        List<DynamicNode> byRanks = new ArrayList<>();
        for (LocalRanks ranks : RANKS) {
            List<DynamicNode> cases = new ArrayList<>();
            for (DataType type : TYPES) {
                for (ReduceOp op : ReduceOp.values()) {
                    cases.add(DynamicTest.dynamicTest(type.testsName() + " " + op.testsName(),
                            () -> check(ranks, type, op)));
                }
            }
            byRanks.add(DynamicContainer.dynamicContainer(ranks.n + " ranks", cases));
        }
        return byRanks;
    }

    /**
     * Hosts of 2 and 4 ranks: the rounds inside a host (shared memory) come first and the ones
     * between hosts last, each rank at its bit-reversed place in the task's order; a place that
     * did not match its partners' would pair the wrong blocks and the results would be wrong.
     */
    @TestFactory
    List<DynamicNode> allReduceWithRanksInBlocksPerHost() {
        List<DynamicNode> byLayout = new ArrayList<>();
        for (int i = 0; i < ON_HOSTS.length; i++) {
            LocalRanks ranks = ON_HOSTS[i];
            List<DynamicNode> cases = new ArrayList<>();
            for (DataType type : HOST_TYPES) {
                for (ReduceOp op : ReduceOp.values()) {
                    cases.add(DynamicTest.dynamicTest(type.testsName() + " " + op.testsName(),
                            () -> check(ranks, type, op)));
                }
            }
            cases.add(DynamicTest.dynamicTest("carried by halving-doubling", () -> assertEquals(
                    List.of("HalvingDoubling"), ranks.run(rank -> sumOfRanks(ranks, rank)).stream().distinct().toList())));
            byLayout.add(DynamicContainer.dynamicContainer(HOST_LAYOUTS[i][0] + " hosts of " + HOST_LAYOUTS[i][1] + " ranks",
                    cases));
        }
        return byLayout;
    }

    /** The calls above ran by halving-doubling: the communicator says so, and sums come out right. */
    @Test
    void halvingDoublingCarriedTheCallsOnAPowerOfTwoOfRanks() {
        for (LocalRanks ranks : RANKS) {
            List<String> algorithms = ranks.run(rank -> sumOfRanks(ranks, rank));
            assertEquals(List.of("HalvingDoubling"), algorithms.stream().distinct().toList(), ranks.n + " ranks");
        }
        List<String> algorithms = threeRanks.run(rank -> sumOfRanks(threeRanks, rank));
        assertEquals(List.of("Ring"), algorithms.stream().distinct().toList(), "3 ranks: not a power of two");
    }

    private static String sumOfRanks(LocalRanks ranks, int rank) {
        Communicator comm = ranks.comms[rank];
        MemorySegment buf = Arena.ofAuto().allocate(4L * 50_000, 64);
        buf.setAtIndex(ValueLayout.JAVA_INT, 49_999, rank + 1);
        comm.allReduce(buf, buf, 50_000, DataType.INT32, ReduceOp.SUM);
        assertEquals(ranks.n * (ranks.n + 1) / 2, buf.getAtIndex(ValueLayout.JAVA_INT, 49_999), "rank " + rank);
        return comm.algorithmFor(CollectiveKind.ALL_REDUCE, 200_000);
    }

    private static void check(LocalRanks ranks, DataType type, ReduceOp op) {
        CollectiveMatrixTest.checkAllReduce(ranks, type, op, SIZES);
    }
}

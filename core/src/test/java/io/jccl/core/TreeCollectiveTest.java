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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The double binary trees (NCCL_ALGO=Tree): all-reduce, broadcast and reduce on 3 to 8 ranks,
 * every root, out-of-place and in-place, over both data paths, against the exact results of
 * {@link VerifiableData}. Small slots (1 KiB) and two channels, so a call runs four trees of many
 * slices; LL off, so that even one element goes through the trees.
 */
class TreeCollectiveTest {
    static final int[] RANK_COUNTS = {3, 4, 5, 8};
    static final long[] SIZES = {1, 257, 20_011};
    static final DataType[] TYPES = {DataType.INT8, DataType.INT32, DataType.UINT64, DataType.FLOAT16,
            DataType.BFLOAT16, DataType.FLOAT32, DataType.FLOAT64};
    static final CollectiveKind[] TREE_COLLECTIVES = {CollectiveKind.ALL_REDUCE, CollectiveKind.BROADCAST,
            CollectiveKind.REDUCE};
    static final LocalRanks[][] RANKS = new LocalRanks[DataPath.values().length][RANK_COUNTS.length];

    @BeforeAll
    static void startCommunicators() {
        for (DataPath path : DataPath.values()) {
            CommConfig trees = path.config().channels(2).bufferSize(8 << 10).lowLatencyBytes(0).algorithms("Tree")
                    .timeout(Duration.ofSeconds(30)).build();
            for (int i = 0; i < RANK_COUNTS.length; i++) {
                RANKS[path.ordinal()][i] = new LocalRanks(RANK_COUNTS[i], trees);
            }
        }
    }

    @AfterAll
    static void closeCommunicators() {
        for (LocalRanks[] byPath : RANKS) {
            for (LocalRanks r : byPath) {
                if (r != null) {
                    r.close();
                }
            }
        }
    }

    @TestFactory
    List<DynamicNode> treeCollectivesOnEveryTypeOperationRootAndRankCount() {
        List<DynamicNode> paths = new ArrayList<>();
        for (DataPath path : DataPath.values()) {
            List<DynamicNode> collectives = new ArrayList<>();
            for (CollectiveKind c : TREE_COLLECTIVES) {
                List<DynamicNode> byRanks = new ArrayList<>();
                for (int i = 0; i < RANK_COUNTS.length; i++) {
                    LocalRanks ranks = RANKS[path.ordinal()][i];
                    List<DynamicNode> cases = new ArrayList<>();
                    for (DataType type : TYPES) {
                        for (ReduceOp op : c.reduces() ? ReduceOp.values() : new ReduceOp[] {null}) {
                            cases.add(DynamicTest.dynamicTest(type.testsName() + (op == null ? "" : " "
                                    + op.testsName()), () -> check(c, ranks, type, op)));
                        }
                    }
                    byRanks.add(DynamicContainer.dynamicContainer(ranks.n + " ranks", cases));
                }
                collectives.add(DynamicContainer.dynamicContainer(c.name(), byRanks));
            }
            paths.add(DynamicContainer.dynamicContainer(path.name(), collectives));
        }
        return paths;
    }

    /** The calls above ran on trees, not on rings: each rank connected its trees, and says so. */
    @Test
    void theTreesCarriedTheCalls() {
        for (DataPath path : DataPath.values()) {
            LocalRanks ranks = RANKS[path.ordinal()][1];
            ranks.run(rank -> {
                Communicator comm = ranks.comms[rank];
                // 200 KB: both channels (64 KiB a channel at least).
                MemorySegment buf = Arena.ofAuto().allocate(4L * 50_000, 64);
                buf.setAtIndex(ValueLayout.JAVA_INT, 49_999, rank + 1);
                comm.allReduce(buf, buf, 50_000, DataType.INT32, ReduceOp.SUM);
                assertEquals(ranks.n * (ranks.n + 1) / 2, buf.getAtIndex(ValueLayout.JAVA_INT, 49_999));
                assertEquals("Tree", comm.algorithmFor(CollectiveKind.ALL_REDUCE, 200_000));
                // Two channels, two trees each, rooted at rank 0.
                assertTrue(comm.treeConnections() >= 4, "rank " + rank + " has " + comm.treeConnections()
                        + " trees connected");
                return null;
            });
        }
    }

    @Test
    void ncclAlgoIsCheckedWhenTheConfigIsBuilt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CommConfig.builder().algorithms("Tree,Bus"));
        assertTrue(e.getMessage().contains("unknown algorithm 'Bus'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CommConfig.builder().algorithms("^Ring,Tree,CollNet,HalvingDoubling"));
        assertTrue(e.getMessage().contains("leaves none"), e.getMessage());
        assertEquals("NVLS,Ring", CommConfig.builder().algorithms("NVLS,Ring").build().algorithms());
    }

    private static void check(CollectiveKind c, LocalRanks ranks, DataType type, ReduceOp op) {
        int n = ranks.n;
        List<String> problems = new ArrayList<>();
        for (long count : SIZES) {
            for (boolean inPlace : new boolean[] {false, true}) {
                // Every root for the rooted collectives, over the sizes: the trees are rooted there.
                for (int root = 0; root < (c == CollectiveKind.ALL_REDUCE ? 1 : n); root++) {
                    int r0 = root;
                    VerifiableData data = new VerifiableData(type, op, n, count * 31 + root + (inPlace ? 1 : 0));
                    List<Long> wrong = ranks.run(rank -> CollectiveMatrixTest.runCase(c, ranks.comms[rank], data, count,
                            type, op, r0, inPlace));
                    long total = wrong.stream().mapToLong(Long::longValue).sum();
                    if (total != 0) {
                        problems.add("count " + count + " root " + root + (inPlace ? " in-place" : " out-of-place")
                                + ": " + total + " wrong elements " + wrong);
                    }
                }
            }
        }
        assertEquals(List.of(), problems, c + " " + type + " " + op + " on " + n + " ranks");
    }
}

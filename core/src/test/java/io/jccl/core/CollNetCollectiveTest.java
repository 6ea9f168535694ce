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

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * All-reduce through CollNet (NCCL_COLLNET_ENABLE=1, NCCL_ALGO=CollNet) on JcclCollNet, its
 * aggregator a thread of rank 0's head: one rank per host, two hosts of two ranks (the members
 * reach their head through shared memory), and uneven hosts of 3, 1 and 2 ranks; every type and
 * operation, out of place and in place, against {@link VerifiableData}'s exact results. Small
 * slots (8 KiB chunks), so a call runs many chunks through the pipeline. (The 8-bit floats have no
 * arithmetic on the host, with or without CollNet.)
 */
class CollNetCollectiveTest {
    /** Host of each rank, per layout. */
    static final int[][] LAYOUTS = {{0, 1, 2, 3}, {0, 0, 1, 1}, {0, 0, 0, 1, 2, 2}};
    static final long[] SIZES = {1, 257, 20_011};
    static final LocalRanks[] RANKS = new LocalRanks[LAYOUTS.length];

    static CommConfig.Builder collNet() {
        return CommConfig.builder().collNet(true).algorithms("CollNet").bufferSize(64 << 10).lowLatencyBytes(0)
                .timeout(Duration.ofSeconds(30));
    }

    static LocalRanks ranks(int[] hosts, CommConfig.Builder config) {
        IntFunction<CommConfig> perRank = rank -> config.hostId("collnet-host-" + hosts[rank]).build();
        return new LocalRanks(hosts.length, hosts.length, UniqueId.create(Duration.ofSeconds(30)), perRank);
    }

    @BeforeAll
    static void startCommunicators() {
        for (int i = 0; i < LAYOUTS.length; i++) {
            RANKS[i] = ranks(LAYOUTS[i], collNet());
        }
    }

    @AfterAll
    static void closeCommunicators() {
        for (LocalRanks r : RANKS) {
            if (r != null) {
                r.close();
            }
        }
    }

    static String describe(int[] hosts) {
        StringBuilder b = new StringBuilder();
        int count = 1;
        for (int i = 1; i <= hosts.length; i++) {
            if (i < hosts.length && hosts[i] == hosts[i - 1]) {
                count++;
            } else {
                b.append(b.isEmpty() ? "" : "+").append(count);
                count = 1;
            }
        }
        return hosts.length + " ranks on hosts of " + b;
    }

    @TestFactory
    List<DynamicNode> allReduceThroughCollNetOnEveryTypeAndOperation() {
        List<DynamicNode> layouts = new ArrayList<>();
        for (int i = 0; i < LAYOUTS.length; i++) {
            LocalRanks ranks = RANKS[i];
            List<DynamicNode> cases = new ArrayList<>();
            for (DataType type : DataType.values()) {
                if (type == DataType.FLOAT8_E4M3 || type == DataType.FLOAT8_E5M2) {
                    continue;
                }
                for (ReduceOp op : ReduceOp.values()) {
                    cases.add(DynamicTest.dynamicTest(type.testsName() + " " + op.testsName(), () -> check(ranks, type, op)));
                }
            }
            layouts.add(DynamicContainer.dynamicContainer(describe(LAYOUTS[i]), cases));
        }
        return layouts;
    }

    @Test
    void theTunerPrintsCollNetWhereItRuns() {
        for (LocalRanks ranks : RANKS) {
            ranks.run(rank -> {
                assertEquals("CollNetChain", ranks.comms[rank].algorithmFor(CollectiveKind.ALL_REDUCE, 1 << 20));
                assertEquals("Ring", ranks.comms[rank].algorithmFor(CollectiveKind.ALL_GATHER, 1 << 20));
                return null;
            });
        }
    }

    @Test
    void collNetIsOffWithoutNcclCollnetEnableAndOnOneHost() {
        try (LocalRanks off = ranks(new int[] {0, 1, 2}, collNet().collNet(false).algorithms(""))) {
            off.run(rank -> {
                assertNotEquals("CollNetChain", off.comms[rank].algorithmFor(CollectiveKind.ALL_REDUCE, 1 << 20));
                return null;
            });
        }
        try (LocalRanks oneHost = ranks(new int[] {0, 0, 0}, collNet().algorithms(""))) {
            oneHost.run(rank -> {
                assertNotEquals("CollNetChain", oneHost.comms[rank].algorithmFor(CollectiveKind.ALL_REDUCE, 1 << 20));
                return null;
            });
        }
    }

    private static void check(LocalRanks ranks, DataType type, ReduceOp op) {
        CollectiveMatrixTest.checkAllReduce(ranks, type, op, SIZES);
    }
}

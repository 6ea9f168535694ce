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
import org.junit.jupiter.api.TestFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every collective x every type x every operation x sizes 0, 1, odd and large x 1 to 4 ranks,
 * out-of-place and in-place, against the exact results of {@link VerifiableData}, over both data
 * paths (the socket transport, and shared memory). Ranks run in this JVM, with small slots (1 KiB)
 * so that the large size runs many loops round the ring of slots and over two channels. One rank
 * has no connections, so it runs once.
 */
class CollectiveMatrixTest {
    static final int MAX_RANKS = 4;
    static final long[] SIZES = {0, 1, 1001, 20_011};
    static final LocalRanks[][] RANKS = new LocalRanks[DataPath.values().length][MAX_RANKS + 1];

    @BeforeAll
    static void startCommunicators() {
        for (DataPath path : DataPath.values()) {
            CommConfig small = path.config().channels(2).bufferSize(8 << 10).p2pChunkSize(1 << 10)
                    .timeout(Duration.ofSeconds(30)).build();
            for (int n = firstRankCount(path); n <= MAX_RANKS; n++) {
                RANKS[path.ordinal()][n] = new LocalRanks(n, small);
            }
        }
    }

    private static int firstRankCount(DataPath path) {
        return path == DataPath.NETWORK ? 1 : 2;
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
    List<DynamicNode> everyCollectiveTypeOperationSizeAndRankCount() {
        List<DynamicNode> paths = new ArrayList<>();
        for (DataPath path : DataPath.values()) {
            paths.add(DynamicContainer.dynamicContainer(path.name(), collectives(path)));
        }
        return paths;
    }

    private static List<DynamicNode> collectives(DataPath path) {
        List<DynamicNode> collectives = new ArrayList<>();
        for (CollectiveKind c : CollectiveKind.values()) {
            List<DynamicNode> byRanks = new ArrayList<>();
            for (int n = firstRankCount(path); n <= MAX_RANKS; n++) {
                LocalRanks ranks = RANKS[path.ordinal()][n];
                List<DynamicNode> cases = new ArrayList<>();
                for (DataType type : DataType.values()) {
                    boolean fp8 = type == DataType.FLOAT8_E4M3 || type == DataType.FLOAT8_E5M2;
                    if (c.reduces() && fp8) {
                        continue;
                    }
                    for (ReduceOp op : c.reduces() ? ReduceOp.values() : new ReduceOp[] {null}) {
                        String name = type.testsName() + (op == null ? "" : " " + op.testsName());
                        cases.add(DynamicTest.dynamicTest(name, () -> check(c, ranks, type, op)));
                    }
                }
                byRanks.add(DynamicContainer.dynamicContainer(n + " ranks", cases));
            }
            collectives.add(DynamicContainer.dynamicContainer(c.name(), byRanks));
        }
        return collectives;
    }

    static void check(CollectiveKind c, LocalRanks ranks, DataType type, ReduceOp op) {
        int n = ranks.n;
        List<String> problems = new ArrayList<>();
        for (long count : SIZES) {
            for (boolean inPlace : new boolean[] {false, true}) {
                int root = (int) (count % n);
                VerifiableData data = new VerifiableData(type, op, n, count + (inPlace ? 1 : 0));
                List<Long> wrong = ranks.run(rank -> runCase(c, ranks.comms[rank], data, count, type, op, root, inPlace));
                long total = wrong.stream().mapToLong(Long::longValue).sum();
                if (total != 0) {
                    problems.add("count " + count + (inPlace ? " in-place" : " out-of-place") + ": " + total
                            + " wrong elements " + wrong);
                }
            }
        }
        assertEquals(List.of(), problems, c + " " + type + " " + op + " on " + n + " ranks");
    }

    /**
     * All-reduce on {@code ranks} at each of {@code sizes}, out-of-place and in-place, against the
     * exact results of {@link VerifiableData}; one failure lists every wrong case.
     */
    static void checkAllReduce(LocalRanks ranks, DataType type, ReduceOp op, long[] sizes) {
        int n = ranks.n;
        List<String> problems = new ArrayList<>();
        for (long count : sizes) {
            for (boolean inPlace : new boolean[] {false, true}) {
                VerifiableData data = new VerifiableData(type, op, n, count * 31 + (inPlace ? 1 : 0));
                List<Long> wrong = ranks.run(rank -> runCase(CollectiveKind.ALL_REDUCE,
                        ranks.comms[rank], data, count, type, op, 0, inPlace));
                long total = wrong.stream().mapToLong(Long::longValue).sum();
                if (total != 0) {
                    problems.add("count " + count + (inPlace ? " in-place" : " out-of-place") + ": " + total
                            + " wrong elements " + wrong);
                }
            }
        }
        assertEquals(List.of(), problems, "all-reduce " + type + " " + op + " on " + n + " ranks");
    }

    /** Runs one collective on one rank and checks its output. @return wrong elements on this rank */
    static long runCase(CollectiveKind kind, Communicator comm, VerifiableData data, long count, DataType type, ReduceOp op,
                        int root, boolean inPlace) {
        int n = comm.size();
        int rank = comm.rank();
        long size = type.size();
        Arena arena = Arena.ofAuto();
        long sendBytes = kind.sendElements(count, n) * size;
        long recvBytes = kind.recvElements(count, n) * size;
        MemorySegment send;
        MemorySegment recv;
        if (!inPlace) {
            send = alloc(arena, sendBytes);
            recv = alloc(arena, recvBytes);
        } else if (kind == CollectiveKind.ALL_GATHER) {
            recv = alloc(arena, recvBytes);
            send = recv.asSlice(rank * count * size, count * size);
        } else if (kind == CollectiveKind.REDUCE_SCATTER) {
            send = alloc(arena, sendBytes);
            recv = send.asSlice(rank * count * size, count * size);
        } else {
            send = alloc(arena, Math.max(sendBytes, recvBytes));
            recv = send;
        }
        kind.fillInput(data, send, count, rank, n, root);
        kind.issue(comm, send, recv, count, type, op, root).await();
        MemorySegment expected = alloc(arena, recvBytes);
        long elements = kind.fillExpected(data, expected, count, rank, n, root);
        return data.countWrong(recv, 0, expected, 0, elements);
    }

    static MemorySegment alloc(Arena arena, long bytes) {
        return arena.allocate(Math.max(1, bytes), 64);
    }
}

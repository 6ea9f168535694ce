package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Random data, each rank's input gathered to rank 0, which computes the reference on its own:
 * exact for integers (wrapping arithmetic does not depend on order), within float rounding for
 * floats, and bit-exact for float sums when the reference adds in the ring's order.
 */
class ReferenceTest {
    @Test
    void randomDataAgainstAReferenceComputedOnRankZero() {
        int n = 3;
        long count = 50_021;
        try (LocalRanks ranks = new LocalRanks(n, CommConfig.builder().bufferSize(32 << 10)
                .timeout(Duration.ofSeconds(30)).build())) {
            for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN)) {
                List<long[]> results = ranks.run(rank -> {
                    Communicator c = ranks.comms[rank];
                    MemorySegment mine = Arena.ofAuto().allocate(count * 8);
                    Random random = new Random(rank * 31L + op.code());
                    for (long i = 0; i < count; i++) {
                        mine.setAtIndex(ValueLayout.JAVA_LONG, i, random.nextLong());
                    }
                    MemorySegment all = Arena.ofAuto().allocate(count * 8 * n);
                    c.allGather(mine, all, count, DataType.INT64);
                    MemorySegment out = Arena.ofAuto().allocate(count * 8);
                    c.allReduce(mine, out, count, DataType.UINT64, op);
                    if (rank != 0) {
                        return new long[] {0};
                    }
                    long wrong = 0;
                    for (long i = 0; i < count; i++) {
                        long ref = all.getAtIndex(ValueLayout.JAVA_LONG, i);
                        for (int r = 1; r < n; r++) {
                            long v = all.getAtIndex(ValueLayout.JAVA_LONG, r * count + i);
                            ref = switch (op) {
                                case SUM -> ref + v;
                                case PROD -> ref * v;
                                case MAX -> Long.compareUnsigned(ref, v) >= 0 ? ref : v;
                                default -> Long.compareUnsigned(ref, v) <= 0 ? ref : v;
                            };
                        }
                        if (ref != out.getAtIndex(ValueLayout.JAVA_LONG, i)) {
                            wrong++;
                        }
                    }
                    return new long[] {wrong};
                });
                assertEquals(0, results.get(0)[0], op + ": elements differing from rank 0's reference");
            }
        }
    }

    @Test
    void randomFloatSumsMatchAReferenceThatAddsInTheRingsOrderBitForBit() {
        int n = 4;
        long count = 4 * 1000;
        // LL off: the ring carries even this small all-reduce.
        try (LocalRanks ranks = new LocalRanks(n, CommConfig.builder().channels(1).bufferSize(64 << 10)
                .lowLatencyBytes(0).algorithms("Ring").timeout(Duration.ofSeconds(30)).build())) {
            List<Long> wrong = ranks.run(rank -> {
                MemorySegment[] gatheredAndSummed = randomFloatsGatheredAndSummed(ranks.comms[rank], count);
                MemorySegment all = gatheredAndSummed[0];
                MemorySegment out = gatheredAndSummed[1];
                // One loop of n chunks of count/n; chunk k starts at rank k+1 and ends at rank k, each
                // step computing received + local.
                long chunk = count / n;
                long bad = 0;
                for (long i = 0; i < count; i++) {
                    int k = (int) (i / chunk);
                    float acc = all.getAtIndex(ValueLayout.JAVA_FLOAT, ((k + 1) % n) * count + i);
                    for (int s = 2; s <= n; s++) {
                        acc = acc + all.getAtIndex(ValueLayout.JAVA_FLOAT, ((k + s) % n) * count + i);
                    }
                    if (Float.floatToRawIntBits(acc) != Float.floatToRawIntBits(out.getAtIndex(ValueLayout.JAVA_FLOAT, i))) {
                        bad++;
                    }
                }
                return bad;
            });
            assertEquals(List.of(0L, 0L, 0L, 0L), wrong);
        }
    }

    /**
     * The double binary trees add up each tree: a rank adds its first child's sum to its input,
     * then its second child's, and sends that up; the root's sum comes down to every rank. Float
     * sums equal that reference bit for bit on every rank (5 ranks, one channel: the first half of
     * the buffer goes through tree 0, the second through tree 1).
     */
    @Test
    void randomFloatSumsMatchAReferenceThatAddsUpEachTreeBitForBit() {
        int n = 5;
        long count = 4 * 1000;
        try (LocalRanks ranks = new LocalRanks(n, CommConfig.builder().channels(1).bufferSize(64 << 10)
                .lowLatencyBytes(0).algorithms("Tree").timeout(Duration.ofSeconds(30)).build())) {
            List<Long> wrong = ranks.run(rank -> {
                MemorySegment[] gatheredAndSummed = randomFloatsGatheredAndSummed(ranks.comms[rank], count);
                MemorySegment all = gatheredAndSummed[0];
                MemorySegment out = gatheredAndSummed[1];
                long bad = 0;
                for (long i = 0; i < count; i++) {
                    float ref = treeSum(all, count, n, 0, i < count / 2 ? 0 : 1, i);
                    if (Float.floatToRawIntBits(ref) != Float.floatToRawIntBits(out.getAtIndex(ValueLayout.JAVA_FLOAT, i))) {
                        bad++;
                    }
                }
                return bad;
            });
            assertEquals(List.of(0L, 0L, 0L, 0L, 0L), wrong);
        }
    }

    /**
     * Each rank's {@code count} random floats in [-1, 1) (seeded by its rank), every rank's gathered,
     * and their sum by the communicator.
     *
     * @return {every rank's input, by rank; the all-reduce's output}
     */
    private static MemorySegment[] randomFloatsGatheredAndSummed(Communicator c, long count) {
        MemorySegment mine = Arena.ofAuto().allocate(count * 4);
        Random random = new Random(c.rank());
        for (long i = 0; i < count; i++) {
            mine.setAtIndex(ValueLayout.JAVA_FLOAT, i, random.nextFloat() * 2 - 1);
        }
        MemorySegment all = Arena.ofAuto().allocate(count * 4 * c.size());
        c.allGather(mine, all, count, DataType.FLOAT32);
        MemorySegment out = Arena.ofAuto().allocate(count * 4);
        c.allReduce(mine, out, count, DataType.FLOAT32, ReduceOp.SUM);
        return new MemorySegment[] {all, out};
    }

    /** c0 + c1 + ... + c(n-1), left to right. */
    private static float rankOrderSum(MemorySegment all, long count, int n, long i) {
        float acc = all.getAtIndex(ValueLayout.JAVA_FLOAT, i);
        for (int r = 1; r < n; r++) {
            acc = acc + all.getAtIndex(ValueLayout.JAVA_FLOAT, r * count + i);
        }
        return acc;
    }

    /** Recursive doubling's order: each round adds the partial sums of pairs of groups, lower group first. */
    private static float doublingSum(MemorySegment all, long count, int n, long i) {
        float[] partial = new float[n];
        for (int r = 0; r < n; r++) {
            partial[r] = all.getAtIndex(ValueLayout.JAVA_FLOAT, r * count + i);
        }
        for (int width = 1; width < n; width <<= 1) {
            for (int r = 0; r < n; r += 2 * width) {
                partial[r] = partial[r] + partial[r + width];
            }
        }
        return partial[0];
    }

    private static float treeSum(MemorySegment all, long count, int n, int rank, int tree, long i) {
        float acc = all.getAtIndex(ValueLayout.JAVA_FLOAT, rank * count + i);
        for (int child : io.jccl.core.collective.DoubleBinaryTree.node(n, rank, 0, tree).children()) {
            acc = treeSum(all, count, n, child, tree, i) + acc;
        }
        return acc;
    }

    /**
     * The LL protocol gives every rank the same bits, in a fixed order: on the shared-memory board
     * float sums equal a reference that adds rank 0's value, then rank 1's, and so on; through the
     * connection mesh (a power-of-two number of ranks: recursive doubling) one that adds the pairs
     * of each round, lower rank first: (c0 + c1) + (c2 + c3). Bit for bit, on every rank.
     */
    @Test
    void smallFloatSumsAddInRankOrderBitForBitOnEveryRank() {
        int n = 4;
        long count = 1000;
        // One host (the board), then two "hosts" of two ranks (the mesh).
        for (boolean oneHost : new boolean[] {true, false}) {
            try (LocalRanks ranks = new LocalRanks(n, n, UniqueId.create(Duration.ofSeconds(30)), rank -> CommConfig
                    // Through the mesh a rank sends its contribution n - 1 times, and the threshold bounds that.
                    .builder().lowLatencyBytes(count * 4 * (n - 1)).hostId(oneHost ? "host" : "host-" + rank / 2)
                    .timeout(Duration.ofSeconds(30)).build())) {
                List<Long> wrong = ranks.run(rank -> {
                    MemorySegment[] gatheredAndSummed = randomFloatsGatheredAndSummed(ranks.comms[rank], count);
                    MemorySegment all = gatheredAndSummed[0];
                    MemorySegment out = gatheredAndSummed[1];
                    long bad = 0;
                    for (long i = 0; i < count; i++) {
                        float acc = oneHost ? rankOrderSum(all, count, n, i) : doublingSum(all, count, n, i);
                        if (Float.floatToRawIntBits(acc) != Float.floatToRawIntBits(out.getAtIndex(ValueLayout.JAVA_FLOAT, i))) {
                            bad++;
                        }
                    }
                    return bad;
                });
                assertEquals(List.of(0L, 0L, 0L, 0L), wrong, oneHost ? "board" : "mesh");
            }
        }
    }
}

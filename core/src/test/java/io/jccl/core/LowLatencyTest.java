package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The LL protocol (small collectives on the calling thread): allocation-free, in order with the
 * operations the proxy runs, across hosts as within one, and refusing misuse with one clear error
 * on every rank instead of wrong data or a hang.
 */
class LowLatencyTest {

    private static CommConfig.Builder config(DataPath path) {
        return path.config().lowLatencyBytes(16 << 10).timeout(Duration.ofSeconds(20));
    }

    /** After warm-up, thousands of small all-reduces allocate (almost) nothing on the calling thread. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void smallCallsAllocateNothing(DataPath path) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int calls = 5_000;
        try (LocalRanks ranks = new LocalRanks(2, config(path).build())) {
            List<Long> allocated = ranks.run(rank -> {
                Communicator c = ranks.comms[rank];
                MemorySegment send = Arena.ofAuto().allocate(64);
                MemorySegment recv = Arena.ofAuto().allocate(64);
                for (int i = 0; i < 2 * calls; i++) { // warm-up: the JIT compiles the path
                    c.allReduce(send, recv, 2, DataType.FLOAT32, ReduceOp.SUM);
                }
                long id = Thread.currentThread().threadId();
                long before = threads.getThreadAllocatedBytes(id);
                for (int i = 0; i < calls; i++) {
                    c.allReduce(send, recv, 2, DataType.FLOAT32, ReduceOp.SUM);
                    c.broadcastAsync(send, recv, 16, DataType.INT32, 1).await();
                }
                return threads.getThreadAllocatedBytes(id) - before;
            });
            for (long bytes : allocated) {
                assertTrue(bytes < 4 * calls, "a rank allocated " + bytes + " bytes in " + 2 * calls
                        + " small calls; the LL path must allocate nothing per call");
            }
        }
    }

    /**
     * Calls take effect in order: a small all-reduce issued right after a large asynchronous one
     * (which the proxy runs) reads that one's output. Each rank's buffer starts at rank + 1; the
     * large all-reduce makes every element S = n(n+1)/2; the small one over its first elements
     * then gives n * S.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void aSmallCallAfterALargeAsynchronousOneSeesItsResult(DataPath path) {
        int n = 3;
        long count = 1 << 18;
        try (LocalRanks ranks = new LocalRanks(n, config(path).build())) {
            List<int[]> results = ranks.run(rank -> {
                Communicator c = ranks.comms[rank];
                MemorySegment big = Arena.ofAuto().allocate(count * 4);
                MemorySegment small = Arena.ofAuto().allocate(64);
                int[] seen = new int[20];
                for (int round = 0; round < seen.length; round++) {
                    for (long i = 0; i < count; i++) {
                        big.setAtIndex(ValueLayout.JAVA_INT, i, rank + 1);
                    }
                    Completion large = c.allReduceAsync(big, big, count, DataType.INT32, ReduceOp.SUM);
                    c.allReduce(big.asSlice(0, 64), small, 16, DataType.INT32, ReduceOp.SUM);
                    large.await();
                    seen[round] = small.getAtIndex(ValueLayout.JAVA_INT, 15);
                }
                return seen;
            });
            int expected = n * (n * (n + 1) / 2);
            for (int[] r : results) {
                for (int v : r) {
                    assertEquals(expected, v, "a small all-reduce read its input before the large one before it ended");
                }
            }
        }
    }

    /**
     * Ranks on two "hosts" (host ids): the LL path connects each pair, shared memory within a host
     * and the network between, and every collective gives the right result.
     */
    @Test
    void everySmallCollectiveAcrossTwoHosts() {
        int n = 4;
        UniqueId id = UniqueId.create(Duration.ofSeconds(20));
        try (LocalRanks ranks = new LocalRanks(n, n, id, rank -> config(DataPath.SHARED_MEMORY)
                .hostId("host-" + rank / 2).build())) {
            ranks.each((rank, c) -> {
                long count = 8;
                MemorySegment send = Arena.ofAuto().allocate(count * 4 * n);
                MemorySegment recv = Arena.ofAuto().allocate(count * 4 * n);
                for (int i = 0; i < count * n; i++) {
                    send.setAtIndex(ValueLayout.JAVA_INT, i, (rank + 1) * 1000 + i);
                }
                c.allReduce(send, recv, count, DataType.INT32, ReduceOp.SUM);
                for (int i = 0; i < count; i++) {
                    assertEquals(10 * 1000 + n * i, recv.getAtIndex(ValueLayout.JAVA_INT, i), "allReduce");
                }
                c.broadcast(send, recv, count, DataType.INT32, 2);
                for (int i = 0; i < count; i++) {
                    assertEquals(3 * 1000 + i, recv.getAtIndex(ValueLayout.JAVA_INT, i), "broadcast");
                }
                recv.fill((byte) 0);
                c.reduce(send, recv, count, DataType.INT32, ReduceOp.MAX, 3);
                for (int i = 0; i < count; i++) {
                    assertEquals(rank == 3 ? 4 * 1000 + i : 0, recv.getAtIndex(ValueLayout.JAVA_INT, i), "reduce");
                }
                c.allGather(send, recv, count, DataType.INT32);
                for (int r = 0; r < n; r++) {
                    for (int i = 0; i < count; i++) {
                        assertEquals((r + 1) * 1000 + i, recv.getAtIndex(ValueLayout.JAVA_INT, r * count + i), "allGather");
                    }
                }
                c.reduceScatter(send, recv, count, DataType.INT32, ReduceOp.SUM);
                for (int i = 0; i < count; i++) {
                    assertEquals(10 * 1000 + n * (rank * count + i), recv.getAtIndex(ValueLayout.JAVA_INT, i),
                            "reduceScatter");
                }
            });
        }
    }

    /**
     * Across hosts a power-of-two number of ranks all-reduces by recursive doubling, the others
     * through every contribution: both give every rank the same bits (floats whose sum depends on
     * the order of the additions), the right values for SUM, AVG and MAX, in place too.
     */
    @ParameterizedTest(name = "{0} ranks")
    @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3, 4, 8})
    void allReduceAcrossHostsGivesEveryRankTheSameBits(int n) {
        UniqueId id = UniqueId.create(Duration.ofSeconds(20));
        long count = 33;
        try (LocalRanks ranks = new LocalRanks(n, n, id, rank -> config(DataPath.SHARED_MEMORY)
                .hostId("host-" + rank / 2).build())) {
            List<float[]> sums = ranks.run(rank -> {
                Communicator c = ranks.comms[rank];
                MemorySegment send = Arena.ofAuto().allocate(count * 4);
                MemorySegment recv = Arena.ofAuto().allocate(count * 4);
                for (int i = 0; i < count; i++) {
                    // Magnitudes far apart: a different order of additions rounds differently.
                    send.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) ((rank % 2 == 0 ? 1e8 : 1.0) * (i + 1) / (rank + 3.0)));
                }
                c.allReduce(send, recv, count, DataType.FLOAT32, ReduceOp.SUM);
                float[] sum = recv.toArray(ValueLayout.JAVA_FLOAT);

                checkMaxInPlaceAndAverage(c, rank, n, Arena.ofAuto().allocate(count * 4), recv, count);
                return sum;
            });
            for (int i = 0; i < count; i++) {
                double exact = 0;
                for (int r = 0; r < n; r++) {
                    exact += (float) ((r % 2 == 0 ? 1e8 : 1.0) * (i + 1) / (r + 3.0));
                }
                for (int r = 0; r < n; r++) {
                    assertEquals(Float.floatToRawIntBits(sums.get(0)[i]), Float.floatToRawIntBits(sums.get(r)[i]),
                            "rank " + r + "'s sum differs in its bits from rank 0's at element " + i);
                }
                assertEquals(exact, sums.get(0)[i], Math.abs(exact) * 1e-6, "SUM, element " + i);
            }
        }
    }

    /**
     * Through connections, the threshold bounds the bytes a rank sends: a contribution sent to
     * each of n - 1 ranks is bounded by threshold / (n - 1), an all-reduce by recursive doubling
     * (a power of two of ranks, log2(n) messages a rank) by 2 threshold / log2(n). So on 4 ranks a
     * 16 KiB all-reduce (threshold 16 KiB) runs on LL, with the right sums, while an all-gather of
     * 16 KiB a rank does not, nor an all-reduce of 16 KiB on 3 ranks; if this fails, check
     * Communicator.lowLatencyPath's limits.
     */
    @ParameterizedTest(name = "{0} ranks")
    @org.junit.jupiter.params.provider.ValueSource(ints = {3, 4})
    void acrossHostsAllReduceByDoublingTakesLargerCallsThanTheMesh(int n) {
        UniqueId id = UniqueId.create(Duration.ofSeconds(20));
        long count = (16 << 10) / 4;
        try (LocalRanks ranks = new LocalRanks(n, n, id, rank -> config(DataPath.SHARED_MEMORY)
                .hostId("host-" + rank / 2).build())) {
            List<String> algorithms = ranks.run(rank -> {
                Communicator c = ranks.comms[rank];
                MemorySegment send = Arena.ofAuto().allocate(count * 4);
                MemorySegment recv = Arena.ofAuto().allocate(count * 4);
                for (int i = 0; i < count; i++) {
                    send.setAtIndex(ValueLayout.JAVA_INT, i, rank * 1000 + i);
                }
                c.allReduce(send, recv, count, DataType.INT32, ReduceOp.SUM);
                for (int i = 0; i < count; i++) {
                    assertEquals(1000 * n * (n - 1) / 2 + n * i, recv.getAtIndex(ValueLayout.JAVA_INT, i), "element " + i);
                }
                return c.algorithmFor(io.jccl.core.check.CollectiveKind.ALL_REDUCE, count * 4) + " "
                        + c.algorithmFor(io.jccl.core.check.CollectiveKind.ALL_GATHER, count * 4 * n);
            });
            for (String a : algorithms) {
                assertEquals(n == 4 ? "LL" : "not LL", a.startsWith("LL ") ? "LL" : "not LL", "all-reduce on " + n + " ranks: " + a);
                assertTrue(!a.endsWith(" LL"), "an all-gather of 16 KiB a rank stays off LL: " + a);
            }
        }
    }

    /**
     * An all-reduce beyond the LL threshold on a board ({@code JCCL_BOARD_ALLREDUCE}) runs in
     * blocks, one a rank: every rank gets the same bits, summed in rank order as the board's
     * small all-reduce sums ((c0 + c1) + c2 ...), for counts that do not divide by the ranks, out
     * of place and in place, for SUM, AVG and MAX, and back to back with small calls and ring calls
     * (the two sets of areas alternate between calls of both kinds).
     */
    @ParameterizedTest(name = "{0} ranks")
    @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3, 4})
    void boardAllReduceInBlocksGivesEveryRankTheRankOrderSum(int n) {
        long count = 20_003; // 80 KiB of floats: beyond the 16 KiB LL threshold, below the board's 128 KiB
        try (LocalRanks ranks = new LocalRanks(n, config(DataPath.SHARED_MEMORY).boardAllReduceBytes(128 << 10).build())) {
            assertEquals("LL", ranks.comms[0].algorithmFor(io.jccl.core.check.CollectiveKind.ALL_REDUCE, count * 4));
            assertTrue(!ranks.comms[0].algorithmFor(io.jccl.core.check.CollectiveKind.ALL_REDUCE, 256 << 10).equals("LL"),
                    "256 KiB is beyond the board's 128 KiB");
            List<float[]> sums = ranks.run(rank -> {
                Communicator c = ranks.comms[rank];
                MemorySegment send = Arena.ofAuto().allocate(count * 4);
                MemorySegment recv = Arena.ofAuto().allocate(count * 4);
                MemorySegment ints = Arena.ofAuto().allocate(count * 4);
                MemorySegment small = Arena.ofAuto().allocate(64);
                float[] first = null;
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < count; i++) {
                        // Magnitudes far apart: a different order of additions rounds differently.
                        send.setAtIndex(ValueLayout.JAVA_FLOAT, i,
                                (float) ((rank % 2 == 0 ? 1e8 : 1.0) * (i + 1 + round) / (rank + 3.0)));
                    }
                    c.allReduce(send, recv, count, DataType.FLOAT32, ReduceOp.SUM);
                    float[] sum = recv.toArray(ValueLayout.JAVA_FLOAT);
                    if (round == 0) {
                        first = sum;
                    }
                    c.allReduce(small, small, 16, DataType.FLOAT32, ReduceOp.SUM); // a small call between

                    checkMaxInPlaceAndAverage(c, rank, n, ints, recv, count);
                    // A ring call (beyond the board) between board calls.
                    MemorySegment big = Arena.ofAuto().allocate(256 << 10);
                    c.allReduce(big, big, (256 << 10) / 4, DataType.FLOAT32, ReduceOp.SUM);
                }
                return first;
            });
            for (int i = 0; i < count; i++) {
                float inOrder = 0;
                for (int r = 0; r < n; r++) {
                    float x = (float) ((r % 2 == 0 ? 1e8 : 1.0) * (i + 1) / (r + 3.0));
                    inOrder = r == 0 ? x : inOrder + x;
                }
                for (int r = 0; r < n; r++) {
                    assertEquals(Float.floatToRawIntBits(inOrder), Float.floatToRawIntBits(sums.get(r)[i]),
                            "rank " + r + "'s sum is not (c0 + c1) + ... in its bits at element " + i);
                }
            }
        }
    }

    /** The board's all-reduce is off unless asked for or ranks outnumber cores; JCCL_BOARD_ALLREDUCE checks its value. */
    @Test
    void boardAllReduceLimitIsChecked() {
        assertThrows(IllegalArgumentException.class, () -> CommConfig.builder().boardAllReduceBytes((4 << 20) + 1));
        assertThrows(IllegalArgumentException.class, () -> CommConfig.builder().boardAllReduceBytes(-2));
        assertEquals(0, CommConfig.builder().lowLatencyBytes(0).boardAllReduceBytes(1 << 20).build().boardAllReduceBytes(),
                "with LL off there is no board");
        try (LocalRanks ranks = new LocalRanks(2, config(DataPath.SHARED_MEMORY).boardAllReduceBytes(0).build())) {
            assertTrue(!ranks.comms[0].algorithmFor(io.jccl.core.check.CollectiveKind.ALL_REDUCE, 64 << 10).equals("LL"),
                    "64 KiB is beyond the 16 KiB threshold and the board all-reduce is off");
        }
    }

    /** MAX of int32 in place, then AVG out of place into {@code recv}, each element checked. */
    private static void checkMaxInPlaceAndAverage(Communicator c, int rank, int n, MemorySegment ints,
                                                  MemorySegment recv, long count) {
        for (int i = 0; i < count; i++) {
            ints.setAtIndex(ValueLayout.JAVA_INT, i, (rank + 1) * 100 + i);
        }
        c.allReduce(ints, ints, count, DataType.INT32, ReduceOp.MAX);
        for (int i = 0; i < count; i++) {
            assertEquals(n * 100 + i, ints.getAtIndex(ValueLayout.JAVA_INT, i), "MAX in place, element " + i);
        }
        for (int i = 0; i < count; i++) {
            ints.setAtIndex(ValueLayout.JAVA_INT, i, (rank + 1) * n * 2 + i);
        }
        c.allReduce(ints, recv, count, DataType.INT32, ReduceOp.AVG);
        for (int i = 0; i < count; i++) {
            // sum over ranks of (r + 1) * 2n + i, divided by n
            assertEquals((n + 1) * n + i, recv.getAtIndex(ValueLayout.JAVA_INT, i), "AVG, element " + i);
        }
    }

    /** Ranks that pass different counts get one error naming both calls, on every rank, not wrong data. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void differentCountsFailEveryRankWithBothCallsNamed(DataPath path) {
        try (LocalRanks ranks = new LocalRanks(2, config(path).build())) {
            List<String> errors = ranks.run(rank -> {
                MemorySegment m = Arena.ofAuto().allocate(64);
                JcclException e = assertThrows(JcclException.class,
                        () -> ranks.comms[rank].allReduce(m, m, rank == 0 ? 2 : 3, DataType.FLOAT32, ReduceOp.SUM));
                return e.getMessage();
            });
            for (String e : errors) {
                assertTrue(e.contains("allReduce(count 2") && e.contains("allReduce(count 3"), e);
            }
        }
    }

    /**
     * Counts that send one rank through the board's small all-reduce and the other through its
     * blocked one still fail both at once with both calls named, not after the timeout.
     */
    @Test
    void differentCountsAcrossTheBoardsTwoAllReducesFailBothAtOnce() {
        try (LocalRanks ranks = new LocalRanks(2, config(DataPath.SHARED_MEMORY).boardAllReduceBytes(128 << 10).build())) {
            long t0 = System.nanoTime();
            List<String> errors = ranks.run(rank -> {
                MemorySegment m = Arena.ofAuto().allocate(80_000);
                JcclException e = assertThrows(JcclException.class,
                        () -> ranks.comms[rank].allReduce(m, m, rank == 0 ? 2000 : 20_000, DataType.FLOAT32, ReduceOp.SUM));
                return e.getMessage();
            });
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            for (String e : errors) {
                assertTrue(e.contains("allReduce(count 2000") && e.contains("allReduce(count 20000"), e);
            }
            assertTrue(ms < 10_000, "the mismatch took " + ms + " ms to fail (the timeout is 20 s)");
        }
    }

    /**
     * A second thread that calls while a first waits in a small call is refused at once, and the
     * first (whose peer never comes) fails soon after instead of waiting out its timeout.
     */
    @Test
    void aSecondConcurrentCallerIsRefusedAndTheFirstDoesNotHang() throws Exception {
        try (LocalRanks ranks = new LocalRanks(2, config(DataPath.SHARED_MEMORY).build())) {
            Communicator c = ranks.comms[0];
            MemorySegment m = Arena.ofAuto().allocate(64);
            CompletableFuture<Throwable> first = CompletableFuture.supplyAsync(() -> {
                try {
                    c.allReduce(m, m, 4, DataType.FLOAT32, ReduceOp.SUM);
                    return null;
                } catch (JcclException e) {
                    return e;
                }
            });
            Thread.sleep(300);
            JcclException second = assertThrows(JcclException.class,
                    () -> c.allReduce(m, m, 4, DataType.FLOAT32, ReduceOp.SUM));
            assertTrue(second.getMessage().contains("another thread"), second.getMessage());
            Throwable f = first.get(5, TimeUnit.SECONDS);
            assertTrue(f instanceof JcclException, "the first call ended with " + f);
        }
    }

    /** NCCL_PROTO in NCCL's syntax: a list to use, or ^ and a list to leave out; unknown names refused. */
    @Test
    void ncclProtoDecidesWhetherLlIsUsed() {
        assertTrue(CommConfig.Builder.protocolAllowsLowLatency(null));
        assertTrue(CommConfig.Builder.protocolAllowsLowLatency("LL,Simple"));
        assertTrue(CommConfig.Builder.protocolAllowsLowLatency("ll"));
        assertTrue(CommConfig.Builder.protocolAllowsLowLatency("^Simple"));
        assertTrue(!CommConfig.Builder.protocolAllowsLowLatency("Simple"));
        assertTrue(!CommConfig.Builder.protocolAllowsLowLatency("LL128,Simple"));
        assertTrue(!CommConfig.Builder.protocolAllowsLowLatency("^LL"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CommConfig.Builder.protocolAllowsLowLatency("LL,Fast"));
        assertTrue(e.getMessage().contains("NCCL_PROTO") && e.getMessage().contains("'Fast'"), e.getMessage());
    }

    /** Runs 8-byte all-reduces (the LL path) until one fails; returns the failure and when it came. */
    private static FaultTest.Failure smallAllReducesUntilFailure(Communicator comm) {
        MemorySegment buf = Arena.ofAuto().allocate(64);
        while (true) {
            try {
                comm.allReduce(buf, buf, 2, DataType.FLOAT32, ReduceOp.SUM);
            } catch (JcclException e) {
                return new FaultTest.Failure(e, System.nanoTime());
            }
        }
    }

    /**
     * A rank killed while the others loop on small calls: each survivor, waiting in the LL path
     * (a board flag, or a message from each rank), fails within the peer timeout, naming it.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void aRankKilledDuringSmallCallsFailsTheOthersWithinThePeerTimeout(DataPath path) throws Exception {
        long peerTimeoutMs = 2_000;
        UniqueId id = UniqueId.create(Duration.ofSeconds(60));
        CommConfig config = config(path).timeout(Duration.ofSeconds(60)).peerTimeout(Duration.ofMillis(peerTimeoutMs))
                .build();
        try (ChildRank child = new ChildRank(3, 2, id, peerTimeoutMs, 2);
             LocalRanks local = new LocalRanks(2, 3, id, config)) {
            child.await("READY", 60);
            long[] killedAt = new long[1];
            Thread killer = new Thread(() -> {
                try {
                    child.await("ITERATION 2", 60);
                    killedAt[0] = System.nanoTime();
                    child.process.destroyForcibly();
                } catch (InterruptedException ignored) {
                    // The test ends anyway.
                }
            });
            killer.start();
            List<FaultTest.Failure> failures = local.run(rank -> smallAllReducesUntilFailure(local.comms[rank]));
            killer.join();
            for (FaultTest.Failure f : failures) {
                long ms = TimeUnit.NANOSECONDS.toMillis(f.atNanos() - killedAt[0]);
                assertEquals(2, f.error().failedRank(), f.error().toString());
                assertTrue(f.error().getMessage().contains("rank 2"), f.error().getMessage());
                assertTrue(ms < peerTimeoutMs + FaultTest.SLACK_MS, "failed " + ms + " ms after the kill: " + f.error());
            }
        }
    }

    /** A frozen rank (SIGSTOP) is found by the heartbeats while the others wait in the LL path. */
    @Test
    void aFrozenRankDuringSmallCallsIsFoundWithinThePeerTimeout() throws Exception {
        long peerTimeoutMs = 1_500;
        UniqueId id = UniqueId.create(Duration.ofSeconds(60));
        CommConfig config = config(DataPath.SHARED_MEMORY).timeout(Duration.ofSeconds(60))
                .peerTimeout(Duration.ofMillis(peerTimeoutMs)).build();
        try (ChildRank child = new ChildRank(2, 1, id, peerTimeoutMs, 2);
             LocalRanks local = new LocalRanks(1, 2, id, config)) {
            child.await("READY", 60);
            long[] frozenAt = new long[1];
            Thread freezer = new Thread(() -> {
                try {
                    child.await("ITERATION 2", 60);
                    frozenAt[0] = System.nanoTime();
                    child.freeze();
                } catch (Exception ignored) {
                    // The test fails on the missing failure instead.
                }
            });
            freezer.start();
            FaultTest.Failure f = local.run(rank -> smallAllReducesUntilFailure(local.comms[rank])).get(0);
            freezer.join();
            long ms = TimeUnit.NANOSECONDS.toMillis(f.atNanos() - frozenAt[0]);
            assertEquals(1, f.error().failedRank(), f.error().toString());
            assertTrue(ms < peerTimeoutMs + FaultTest.SLACK_MS, "failed " + ms + " ms after the freeze: " + f.error());
        }
    }
}

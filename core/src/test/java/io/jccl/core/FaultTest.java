package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dead, frozen and absent peers: every rank's pending operations fail within the bound with an
 * error that names the rank to blame, and abort always returns.
 */
class FaultTest {
    /** Slack over a bound for a loaded 2-core machine. */
    static final long SLACK_MS = 8_000;

    record Failure(JcclException error, long atNanos) {
    }

    /** Runs 4 MiB all-reduces until one fails; returns the failure and when it came. */
    static Failure allReduceUntilFailure(Communicator comm) {
        long count = 1 << 20;
        MemorySegment buf = Arena.ofAuto().allocate(count * 4);
        while (true) {
            try {
                comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
            } catch (JcclException e) {
                return new Failure(e, System.nanoTime());
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void aRankKilledMidCollectiveFailsEveryOtherRankWithinThePeerTimeoutNamingIt(DataPath path) throws Exception {
        long peerTimeoutMs = 3_000;
        UniqueId id = UniqueId.create(Duration.ofSeconds(60));
        CommConfig config = CommConfig.builder().sharedMemory(path.shm).timeout(Duration.ofSeconds(60))
                .peerTimeout(Duration.ofMillis(peerTimeoutMs)).build();
        try (ChildRank child = new ChildRank(4, 3, id, peerTimeoutMs);
             LocalRanks local = new LocalRanks(3, 4, id, config)) {
            child.await("READY", 60);
            long[] killedAt = new long[1];
            Thread killer = new Thread(() -> {
                try {
                    child.await("ITERATION 1", 60);
                    killedAt[0] = System.nanoTime();
                    child.process.destroyForcibly();
                } catch (InterruptedException ignored) {
                    // The test ends anyway.
                }
            });
            killer.start();
            List<Failure> failures = local.run(rank -> allReduceUntilFailure(local.comms[rank]));
            killer.join();
            for (Failure f : failures) {
                long ms = TimeUnit.NANOSECONDS.toMillis(f.atNanos() - killedAt[0]);
                assertEquals(3, f.error().failedRank(), f.error().toString());
                assertEquals(NetResult.REMOTE_ERROR, f.error().result(), f.error().toString());
                assertTrue(f.error().getMessage().contains("rank 3"), f.error().getMessage());
                assertTrue(ms < peerTimeoutMs + SLACK_MS, "failed " + ms + " ms after the kill: " + f.error());
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void aFrozenRankIsDetectedByHeartbeatsWithinThePeerTimeout(DataPath path) throws Exception {
        long peerTimeoutMs = 1_500;
        UniqueId id = UniqueId.create(Duration.ofSeconds(60));
        CommConfig config = CommConfig.builder().sharedMemory(path.shm).timeout(Duration.ofSeconds(60))
                .peerTimeout(Duration.ofMillis(peerTimeoutMs)).build();
        try (ChildRank child = new ChildRank(3, 2, id, peerTimeoutMs);
             LocalRanks local = new LocalRanks(2, 3, id, config)) {
            child.await("READY", 60);
            long[] frozenAt = new long[1];
            Thread freezer = new Thread(() -> {
                try {
                    child.await("ITERATION 1", 60);
                    frozenAt[0] = System.nanoTime();
                    child.freeze();
                } catch (Exception ignored) {
                    // The test fails on the missing failure instead.
                }
            });
            freezer.start();
            List<Failure> failures = local.run(rank -> allReduceUntilFailure(local.comms[rank]));
            freezer.join();
            for (Failure f : failures) {
                long ms = TimeUnit.NANOSECONDS.toMillis(f.atNanos() - frozenAt[0]);
                assertEquals(2, f.error().failedRank(), f.error().toString());
                assertTrue(f.error().getMessage().contains("rank 2"), f.error().getMessage());
                assertTrue(ms < peerTimeoutMs + SLACK_MS, "failed " + ms + " ms after the freeze: " + f.error());
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void abortReturnsWhileACollectiveIsStuckAndTheOtherRanksLearnWhy(DataPath path) {
        // The proxy's path: an all-reduce the board would run on the calling thread could not be left stuck.
        try (LocalRanks local = new LocalRanks(3, CommConfig.builder().sharedMemory(path.shm).timeout(Duration.ofSeconds(60))
                .peerTimeout(Duration.ofSeconds(2)).boardAllReduceBytes(0).build())) {
            MemorySegment buf = Arena.ofAuto().allocate(1 << 20);
            Completion stuck0 = local.comms[0].allReduceAsync(buf, buf, 1 << 18, DataType.FLOAT32, ReduceOp.SUM);
            Completion stuck1 = local.comms[1].allReduceAsync(buf, buf, 1 << 18, DataType.FLOAT32, ReduceOp.SUM);
            assertTrue(!stuck0.await(Duration.ofMillis(300)), "rank 2 never joined, so the all-reduce cannot finish");
            long t0 = System.nanoTime();
            local.comms[0].abort();
            long abortMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(abortMs < 5_000, "abort took " + abortMs + " ms");
            JcclException mine = assertThrows(JcclException.class, stuck0::await);
            assertTrue(mine.getMessage().contains("aborted"), mine.getMessage());
            JcclException theirs = assertThrows(JcclException.class, stuck1::await);
            assertEquals(0, theirs.failedRank(), theirs.toString());
            assertTrue(theirs.getMessage().contains("rank 0"), theirs.getMessage());
            assertTrue(waitFor(() -> local.comms[2].asyncError() != null, 10_000),
                    "rank 2, which was idle, learns of the abort too");
            assertThrows(JcclException.class, () -> local.comms[2].allReduce(buf, buf, 1, DataType.FLOAT32, ReduceOp.SUM));
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void anOperationThatMakesNoProgressTimesOutNamingTheRankItWaitsFor(DataPath path) {
        try (LocalRanks local = new LocalRanks(3, CommConfig.builder().sharedMemory(path.shm).timeout(Duration.ofSeconds(1))
                .boardAllReduceBytes(0).build())) {
            MemorySegment buf = Arena.ofAuto().allocate(1 << 20);
            Completion a = local.comms[0].allReduceAsync(buf, buf, 1 << 18, DataType.FLOAT32, ReduceOp.SUM);
            Completion b = local.comms[1].allReduceAsync(buf, buf, 1 << 18, DataType.FLOAT32, ReduceOp.SUM);
            long t0 = System.nanoTime();
            for (Completion c : List.of(a, b)) {
                JcclException e = assertThrows(JcclException.class, c::await);
                assertEquals(2, e.failedRank(), e.toString());
                assertTrue(e.getMessage().contains("rank 2"), e.getMessage());
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 1_000 + SLACK_MS, "timed out after " + ms + " ms with a 1000 ms bound");
            assertNotNull(local.comms[0].asyncError());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void initFailsWithinTheTimeoutNamingTheRanksThatNeverJoined(DataPath path) {
        UniqueId id = UniqueId.create(Duration.ofMillis(1500));
        CommConfig config = CommConfig.builder().sharedMemory(path.shm).timeout(Duration.ofSeconds(20)).build();
        long t0 = System.nanoTime();
        JcclException e = assertThrows(JcclException.class, () -> new LocalRanks(2, 3, id, config));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(NetResult.TIMEOUT, e.result(), e.toString());
        assertTrue(e.getMessage().contains("missing ranks [2]"), e.getMessage());
        assertTrue(ms < 1_500 + SLACK_MS, "init failed after " + ms + " ms");
    }

    static boolean waitFor(java.util.function.BooleanSupplier condition, long ms) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return condition.getAsBoolean();
    }
}

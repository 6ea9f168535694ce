package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seeds' experiment with a real process: the last rank is a child JVM ({@link PeerRank}) that
 * loops all-reduce; it is killed ({@code SIGKILL}) or frozen ({@code SIGSTOP}) mid-loop. The
 * ranks of this JVM fail within the peer timeout, shrink, go on with checked results, then grow
 * back with a new child process and go on at the original size.
 */
class ElasticProcessTest {
    private static final long PEER_TIMEOUT_MS = 2000;
    /** Elements of each all-reduce: the child's (PeerRank's) size, through the proxy. */
    private static final int COUNT = 1 << 18;
    private static final int ITERATIONS = 6;

    @ParameterizedTest(name = "{0} ranks, last one {1}")
    @CsvSource({"2, kill", "3, kill", "3, freeze", "4, kill"})
    void survivorsOfADeadOrFrozenProcessShrinkAndGrowBack(int n, String how) throws Exception {
        // -Djccl.elastic.processRuns=100 for the stress run (each kill takes about a second, a freeze the peer timeout)
        for (int run = 0; run < Integer.getInteger("jccl.elastic.processRuns", 1); run++) {
            scenario(n, how);
        }
    }

    private static void scenario(int n, String how) throws Exception {
        ExecutorService threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "elastic-survivor");
            t.setDaemon(true);
            return t;
        });
        UniqueId id = UniqueId.create(Duration.ofSeconds(30));
        CommConfig config = CommConfig.builder().timeout(Duration.ofSeconds(30))
                .peerTimeout(Duration.ofMillis(PEER_TIMEOUT_MS)).build();
        try (ChildRank child = new ChildRank(n, n - 1, id, PEER_TIMEOUT_MS, COUNT)) {
            CompletableFuture<UniqueId> growId = new CompletableFuture<>();
            long[] stoppedAt = new long[1];
            List<Future<Long>> survivors = new ArrayList<>();
            java.util.concurrent.CyclicBarrier done = new java.util.concurrent.CyclicBarrier(n - 1);
            for (int r = 0; r < n - 1; r++) {
                int rank = r;
                survivors.add(threads.submit(() -> survivor(n, id, rank, config, growId, done)));
            }
            child.await("ITERATION 3", 60);
            stoppedAt[0] = System.nanoTime();
            if (how.equals("kill")) {
                child.process.destroyForcibly();
            } else {
                child.freeze();
            }
            UniqueId grown = growId.get(90, TimeUnit.SECONDS);
            try (ChildRank newcomer = new ChildRank(n, n - 1, grown, PEER_TIMEOUT_MS, COUNT)) {
                for (Future<Long> f : survivors) {
                    long failedAt = f.get(120, TimeUnit.SECONDS);
                    long ms = TimeUnit.NANOSECONDS.toMillis(failedAt - stoppedAt[0]);
                    assertTrue(ms < PEER_TIMEOUT_MS + 3000, "a survivor failed " + ms + " ms after the " + how);
                }
                newcomer.process.destroyForcibly();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * One in-JVM rank: loops until the child stops, shrinks, loops, grows with a new child, loops.
     *
     * @return when its call failed
     */
    private static long survivor(int n, UniqueId id, int rank, CommConfig config, CompletableFuture<UniqueId> growId,
                                 java.util.concurrent.CyclicBarrier done) throws Exception {
        Communicator comm = Communicator.init(n, id, rank, config);
        MemorySegment buf = Arena.ofAuto().allocate(4L * COUNT, 64);
        float childPart = 0;
        long failedAt;
        for (int i = 0; ; i++) {
            try {
                childPart = step(comm, buf, i, childPart, true);
            } catch (JcclException e) {
                failedAt = System.nanoTime();
                break;
            }
        }
        try (Communicator small = comm.shrink(n - 1)) {
            comm.abort();
            assertEquals(n - 1, small.size());
            for (int i = 0; i < ITERATIONS; i++) {
                step(small, buf, i, 0, false);
            }
            UniqueId mine = null;
            if (small.rank() == 0) {
                mine = small.growId();
                growId.complete(mine);
            }
            try (Communicator grown = small.grow(n, mine)) {
                // The new child starts from zeros, then adds its last result, as the first one did.
                float part = 0;
                for (int i = 0; i < ITERATIONS; i++) {
                    part = step(grown, buf, i, part, true);
                }
                // Every survivor's last call is complete before any leaves (the child loops on).
                done.await(60, TimeUnit.SECONDS);
                grown.abort();
            }
        }
        return failedAt;
    }

    /**
     * One checked all-reduce: this JVM's ranks contribute {@code rank + 1 + i}, the child (the last
     * rank, when {@code withChild}) its buffer, which holds its previous result.
     *
     * @return the result, the child's next contribution
     */
    private static float step(Communicator c, MemorySegment buf, int i, float childPart, boolean withChild) {
        for (int k = 0; k < COUNT; k++) {
            buf.setAtIndex(ValueLayout.JAVA_FLOAT, k, c.rank() + 1 + i);
        }
        c.allReduce(buf, buf, COUNT, DataType.FLOAT32, ReduceOp.SUM);
        int mine = withChild ? c.size() - 1 : c.size();
        float expected = mine * (mine + 1) / 2f + mine * i + childPart;
        for (int k = 0; k < COUNT; k += 101) {
            float got = buf.getAtIndex(ValueLayout.JAVA_FLOAT, k);
            if (got != expected) {
                throw new AssertionError("rank " + c.rank() + " of " + c.size() + ", iteration " + i + ": " + got
                        + " where the sum is " + expected);
            }
        }
        return expected;
    }
}

package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seeds' experiment, as threads of one JVM: ranks loop all-reduce on checked data; at a random
 * iteration one or two ranks stop (abort, as a process that exits); the survivors fail within the
 * bound, shrink among themselves, go on with correct results, then admit as many new ranks with
 * grow and go on at the original size.
 */
class ElasticTest {
    /** Bound on a whole scenario: a hang fails the test. */
    private static final long SCENARIO_SECONDS = 120;
    private static final int ITERATIONS = 12;

    static CommConfig config() {
        return CommConfig.builder().timeout(Duration.ofSeconds(30)).peerTimeout(Duration.ofSeconds(2)).build();
    }

    /** Times of one scenario, in milliseconds, the slowest survivor's. */
    record Times(long detect, long shrink, long grow) {
    }

    @ParameterizedTest(name = "{0} ranks, {1} stopping, seed {2}")
    @CsvSource({"2, 1, 1", "3, 1, 2", "4, 1, 3", "4, 2, 4", "8, 2, 5", "5, 1, 6"})
    void survivorsShrinkAndGrowBackWithCorrectResults(int n, int stopping, long seed) throws Exception {
        scenario(n, stopping, seed);
    }

    /**
     * Runs the scenario and checks it.
     *
     * @return how long the survivors took to notice the stop, to shrink and to grow
     */
    static Times scenario(int n, int stopping, long seed) throws Exception {
        Random random = new Random(seed);
        List<Integer> all = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            all.add(r);
        }
        java.util.Collections.shuffle(all, random);
        // Rank 0 among them now and then: the survivors then agree without the rank that led init.
        int[] victims = all.subList(0, stopping).stream().mapToInt(Integer::intValue).sorted().toArray();
        int stopAt = 1 + random.nextInt(ITERATIONS - 2);
        String what = n + " ranks, ranks " + Arrays.toString(victims) + " stop at iteration " + stopAt;
        ExecutorService threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "elastic-rank");
            t.setDaemon(true);
            return t;
        });
        try {
            UniqueId id = UniqueId.create(Duration.ofSeconds(30));
            CompletableFuture<UniqueId> growId = new CompletableFuture<>();
            java.util.concurrent.atomic.AtomicLong stoppedAt = new java.util.concurrent.atomic.AtomicLong();
            List<Future<String>> ranks = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                boolean victim = Arrays.binarySearch(victims, rank) >= 0;
                ranks.add(threads.submit(() -> runRank(n, id, rank, victim, victims, stopAt, growId, stoppedAt)));
            }
            // The newcomers: as many as stopped, joining the grown communicator as its last ranks.
            List<Future<String>> newcomers = new ArrayList<>();
            for (int i = 0; i < stopping; i++) {
                int rank = n - stopping + i;
                newcomers.add(threads.submit(() -> {
                    UniqueId grown = growId.get(SCENARIO_SECONDS, TimeUnit.SECONDS);
                    try (Communicator c = Communicator.init(n, grown, rank, config())) {
                        return "ok: " + loop(c, ITERATIONS, 1000) + " as newcomer rank " + rank;
                    }
                }));
            }
            long detect = 0;
            long shrink = 0;
            long grow = 0;
            for (int r = 0; r < n; r++) {
                String result = ranks.get(r).get(SCENARIO_SECONDS, TimeUnit.SECONDS);
                boolean victim = Arrays.binarySearch(victims, r) >= 0;
                assertTrue(result.startsWith(victim ? "stopped" : "ok"), what + ": rank " + r + ": " + result);
                if (!victim) {
                    String[] t = result.substring(result.indexOf('[') + 1, result.indexOf(']')).split(",");
                    detect = Math.max(detect, Long.parseLong(t[0].strip()) - stoppedAt.get());
                    shrink = Math.max(shrink, Long.parseLong(t[1].strip()));
                    grow = Math.max(grow, Long.parseLong(t[2].strip()));
                }
            }
            for (Future<String> f : newcomers) {
                String result = f.get(SCENARIO_SECONDS, TimeUnit.SECONDS);
                assertTrue(result.startsWith("ok"), what + ": " + result);
            }
            return new Times(TimeUnit.NANOSECONDS.toMillis(detect), TimeUnit.NANOSECONDS.toMillis(shrink),
                    TimeUnit.NANOSECONDS.toMillis(grow));
        } finally {
            threads.shutdownNow();
        }
    }

    /** One rank of the scenario. @return {@code stopped}, or {@code ok ...} with the phases' figures */
    private static String runRank(int n, UniqueId id, int rank, boolean victim, int[] victims, int stopAt,
                                  CompletableFuture<UniqueId> growId, java.util.concurrent.atomic.AtomicLong stoppedAt) {
        Communicator comm = Communicator.init(n, id, rank, config());
        MemorySegment buf = Arena.ofAuto().allocate(4L * (1 << 18), 64);
        long failedAt;
        int iteration = 0;
        while (true) {
            if (victim && iteration == stopAt) {
                stoppedAt.compareAndSet(0, System.nanoTime());
                comm.abort();
                return "stopped";
            }
            try {
                // Alternately small (LL, on the calling thread) and large (through the proxy).
                step(comm, buf, iteration % 2 == 0 ? 1000 : 1 << 18, iteration);
            } catch (JcclException e) {
                failedAt = System.nanoTime();
                if (victim) {
                    // The other stopping rank went first: this one stops a call early.
                    comm.abort();
                    return "stopped";
                }
                // A stopping rank's last call may end on its side with its last slot still to leave:
                // the others may then fail one call earlier.
                if (iteration != stopAt && iteration != stopAt - 1) {
                    throw new AssertionError("rank " + rank + " failed at iteration " + iteration + ", not at "
                            + stopAt + ": " + e.getMessage(), e);
                }
                break;
            }
            iteration++;
        }
        Communicator small = comm.shrink(victims);
        long shrunk = System.nanoTime();
        comm.abort();
        assertEquals(n - victims.length, small.size());
        String afterShrink = loop(small, ITERATIONS, 1 << 18);
        long growStart = System.nanoTime();
        UniqueId grownId = null;
        if (small.rank() == 0) {
            grownId = small.growId();
            growId.complete(grownId);
        }
        try (Communicator grown = small.grow(n, grownId)) {
            long grew = System.nanoTime();
            small.close();
            assertEquals(n, grown.size());
            String afterGrow = loop(grown, ITERATIONS, 1000);
            // [failed at, shrink ns, grow ns] for the figures, then what ran
            return "ok [" + failedAt + ", " + (shrunk - failedAt) + ", " + (grew - growStart) + "] " + afterShrink + "; "
                    + afterGrow;
        }
    }

    /** {@code iterations} checked all-reduces. @return a summary */
    private static String loop(Communicator c, int iterations, int count) {
        MemorySegment buf = Arena.ofAuto().allocate(4L * count, 64);
        for (int i = 0; i < iterations; i++) {
            step(c, buf, count, i);
        }
        return iterations + " checked all-reduces on " + c.size() + " ranks";
    }

    /** One all-reduce whose every element must be the sum of (rank + 1 + iteration) over the ranks. */
    private static void step(Communicator c, MemorySegment buf, int count, int iteration) {
        int mine = c.rank() + 1 + iteration;
        for (int i = 0; i < count; i++) {
            buf.setAtIndex(ValueLayout.JAVA_INT, i, mine);
        }
        c.allReduce(buf, buf, count, DataType.INT32, ReduceOp.SUM);
        int n = c.size();
        int expected = n * (n + 1) / 2 + n * iteration;
        for (int i = 0; i < count; i += 97) {
            int got = buf.getAtIndex(ValueLayout.JAVA_INT, i);
            if (got != expected) {
                throw new AssertionError("rank " + c.rank() + " of " + n + ", iteration " + iteration + ", element " + i
                        + ": " + got + " where the sum is " + expected);
            }
        }
    }

    @Test
    void nonBlockingInitReturnsAtOnceAndFailsWithinTheTimeoutWhenARankNeverComes() throws Exception {
        UniqueId id = UniqueId.create(Duration.ofSeconds(5));
        CommConfig quick = CommConfig.builder().timeout(Duration.ofSeconds(2)).build();
        long start = System.nanoTime();
        var zero = Communicator.initAsync(2, id, 0, quick);
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < 1000, "initAsync returned late");
        // Rank 1 never joins.
        var e = assertThrows(java.util.concurrent.ExecutionException.class, () -> zero.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof JcclException, String.valueOf(e.getCause()));
        UniqueId both = UniqueId.create(Duration.ofSeconds(30));
        var a = Communicator.initAsync(2, both, 0, config());
        var b = Communicator.initAsync(2, both, 1, config());
        Communicator ca = a.get(30, TimeUnit.SECONDS);
        Communicator cb = b.get(30, TimeUnit.SECONDS);
        assertEquals(2, ca.size());
        assertEquals(1, cb.rank());
        // close is collective (one thread here): abort both
        ca.abort();
        cb.abort();
    }

    @Test
    void survivorsThatDisagreeOnTheExcludedRanksAllFailWithOneClearError() throws Exception {
        try (LocalRanks ranks = new LocalRanks(3, config())) {
            List<String> errors = ranks.run(rank -> {
                JcclException e = assertThrows(JcclException.class,
                        () -> ranks.comms[rank].shrink(rank == 2 ? new int[] {0} : new int[] {}));
                return e.getMessage();
            });
            for (String e : errors) {
                assertTrue(e.contains("disagree on the ranks to exclude"), e);
            }
        }
    }

    @Test
    void badShrinkAndGrowArgumentsAreRefusedBeforeAnythingHappens() {
        try (LocalRanks ranks = new LocalRanks(2, config())) {
            Communicator c = ranks.comms[0];
            assertTrue(assertThrows(JcclException.class, () -> c.shrink(0)).getMessage().contains("excludes itself"));
            assertTrue(assertThrows(JcclException.class, () -> c.shrink(5)).getMessage().contains("outside 0..1"));
            assertTrue(assertThrows(JcclException.class, () -> c.shrink(1, 1)).getMessage().contains("twice"));
            assertTrue(assertThrows(JcclException.class, () -> c.grow(2, null)).getMessage().contains("not larger"));
            assertEquals(null, c.asyncError(), "refused arguments leave the communicator healthy");
        }
    }

    @Test
    void revokeFailsEveryRanksPendingAndLaterOperations() {
        try (LocalRanks ranks = new LocalRanks(3, config())) {
            List<String> results = ranks.run(rank -> {
                Communicator c = ranks.comms[rank];
                MemorySegment buf = Arena.ofAuto().allocate(4L << 20, 64);
                if (rank == 1) {
                    c.revoke();
                }
                long start = System.nanoTime();
                // Rank 1 never calls it: the others' call would wait for it, and fails instead.
                JcclException e = assertThrows(JcclException.class, () -> {
                    if (rank != 1) {
                        c.allReduce(buf, buf, 1 << 20, DataType.FLOAT32, ReduceOp.SUM);
                    }
                    c.allReduce(buf, buf, 1 << 20, DataType.FLOAT32, ReduceOp.SUM);
                });
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(ms < 5000, "rank " + rank + " failed after " + ms + " ms");
                return e.getMessage();
            });
            for (String m : results) {
                assertTrue(m.contains("revoked"), m);
            }
            ranks.abortAll();
        }
    }
}

package io.jccl.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link ElasticTest}'s scenario many times with random victims (rank 0 among them) and stop points,
 * at 2, 4 and 8 ranks: zero hangs (each scenario is bounded), zero wrong results (every all-reduce
 * is checked). {@code -Djccl.elastic.runs=100} for the stress run (default 3 per rank count in the
 * build); prints the median and maximum time to detect a stop, to shrink and to grow.
 */
class ElasticStressTest {
    @Test
    void scenariosAtTwoFourAndEightRanks() throws Exception {
        int runs = Integer.getInteger("jccl.elastic.runs", 3);
        long seed = Long.getLong("jccl.elastic.seed", System.nanoTime());
        Random random = new Random(seed);
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
                "elastic scenarios, seed %d, %d runs per rank count (ms, median / max)%n%6s %16s %16s %16s%n", seed, runs,
                "ranks", "detect", "shrink", "grow"));
        int done = 0;
        for (int n : new int[] {2, 4, 8}) {
            List<ElasticTest.Times> times = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                int stopping = n >= 4 && random.nextBoolean() ? 2 : 1;
                long scenarioSeed = random.nextLong();
                try {
                    times.add(ElasticTest.scenario(n, stopping, scenarioSeed));
                } catch (Exception | AssertionError e) {
                    throw new AssertionError(n + " ranks, " + stopping + " stopping, scenario seed " + scenarioSeed
                            + " (stress seed " + seed + "): " + e.getMessage(), e);
                }
                done++;
            }
            table.append(String.format(Locale.ROOT, "%6d %16s %16s %16s%n", n,
                    stat(times.stream().mapToLong(ElasticTest.Times::detect).toArray()),
                    stat(times.stream().mapToLong(ElasticTest.Times::shrink).toArray()),
                    stat(times.stream().mapToLong(ElasticTest.Times::grow).toArray())));
        }
        System.out.print(table);
        assertEquals(3 * runs, done);
    }

    private static String stat(long[] values) {
        long[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2] + " / " + sorted[sorted.length - 1];
    }
}

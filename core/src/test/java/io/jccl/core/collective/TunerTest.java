package io.jccl.core.collective;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TunerTest {
    private static final Set<Algorithm> ALL = EnumSet.allOf(Algorithm.class);

    @Test
    void twoRanksAlwaysRunOnTheRing() {
        Tuner t = new Tuner(2, ALL, Tuner.SHARED_MEMORY);
        for (long bytes = 1; bytes <= 1L << 32; bytes *= 4) {
            assertEquals(Algorithm.RING, t.choose(Tuner.Collective.ALL_REDUCE, bytes), bytes + " B");
        }
    }

    /** One crossover per rank count: trees below it, rings above, as the two predictions cross. */
    @Test
    void treesWinUpToOneSizeAndRingsAbove() {
        for (Tuner.Costs costs : new Tuner.Costs[] {Tuner.SHARED_MEMORY, Tuner.NETWORK}) {
            for (int n : new int[] {4, 8, 16, 64}) {
                Tuner t = new Tuner(n, ALL, costs);
                int switches = 0;
                Algorithm previous = t.choose(Tuner.Collective.ALL_REDUCE, 1);
                assertEquals(Algorithm.TREE, previous, n + " ranks, 1 B");
                for (long bytes = 2; bytes <= 1L << 34; bytes *= 2) {
                    Algorithm a = t.choose(Tuner.Collective.ALL_REDUCE, bytes);
                    double tree = t.predictMicros(Algorithm.TREE, Tuner.Collective.ALL_REDUCE, bytes);
                    double ring = t.predictMicros(Algorithm.RING, Tuner.Collective.ALL_REDUCE, bytes);
                    assertEquals(tree < ring ? Algorithm.TREE : Algorithm.RING, a, n + " ranks " + bytes + " B");
                    switches += a != previous ? 1 : 0;
                    previous = a;
                }
                assertEquals(Algorithm.RING, previous, n + " ranks, 16 GiB");
                assertEquals(1, switches, n + " ranks: one crossover");
            }
        }
    }

    @Test
    void ncclAlgoNarrowsTheChoiceAndCollectivesWithoutTreesStayOnRings() {
        Tuner treesOnly = new Tuner(8, Algorithm.parseAllowed("Tree"), Tuner.NETWORK);
        assertEquals(Algorithm.TREE, treesOnly.choose(Tuner.Collective.ALL_REDUCE, 1L << 32));
        assertEquals(Algorithm.TREE, treesOnly.choose(Tuner.Collective.BROADCAST, 1L << 32));
        assertEquals(Algorithm.RING, treesOnly.choose(Tuner.Collective.ALL_GATHER, 1));
        assertEquals(Algorithm.RING, treesOnly.choose(Tuner.Collective.REDUCE_SCATTER, 1));
        Tuner ringsOnly = new Tuner(8, Algorithm.parseAllowed("^tree"), Tuner.NETWORK);
        assertEquals(Algorithm.RING, ringsOnly.choose(Tuner.Collective.ALL_REDUCE, 1));
        assertEquals(EnumSet.of(Algorithm.RING), Algorithm.parseAllowed("Ring,PAT,CollNetDirect"));
        assertEquals(ALL, Algorithm.parseAllowed(" "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Algorithm.parseAllowed("NVLS"));
        assertTrue(e.getMessage().startsWith("NCCL_ALGO=NVLS leaves none"), e.getMessage());
    }
}
